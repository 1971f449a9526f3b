// Command go_yaml_scalars prints what kubectl, helm and Argo CD send for plain YAML scalars.
//
// They turn YAML into JSON with sigs.k8s.io/yaml (go-yaml v2 underneath), whose rules for
// plain scalars differ from YAML 1.1's, which wavegen's resolver follows (as PyYAML does):
// it has no base-60 numbers, keeps timestamps as written, reads "=" as a string. For each
// scalar given (one JSON string per line on stdin), this prints one JSON line: the JSON
// that `v: <scalar>` becomes, or {"error": "..."} when sigs.k8s.io/yaml refuses it.
// wavegen's core/yamltojson.py is held to these answers (tests/unit/test_hashing.py, and
// tests/integration/test_go_yaml_scalars.py, which runs this against the module proxy's
// sigs.k8s.io/yaml).
//
// Run:  cd tests/vectors/go_yaml_scalars && go run . < scalars.txt
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	lines := bufio.NewScanner(os.Stdin)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		var scalar string
		if err := json.Unmarshal(lines.Bytes(), &scalar); err != nil {
			fmt.Fprintln(os.Stderr, "not a JSON string:", lines.Text())
			os.Exit(2)
		}
		converted, err := yaml.YAMLToJSON([]byte("v: " + scalar + "\n"))
		if err != nil {
			message, _ := json.Marshal(err.Error())
			fmt.Printf("{\"error\": %s}\n", message)
			continue
		}
		fmt.Println(string(converted))
	}
}
