module wavegen.invalid/go_yaml_scalars

go 1.22

require sigs.k8s.io/yaml v1.6.0

require go.yaml.in/yaml/v2 v2.4.2 // indirect
