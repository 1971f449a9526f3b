{{/* Name of every object: fullnameOverride, else the release name. */}}
{{- define "wavegen.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "wavegen.selectorLabels" -}}
app.kubernetes.io/name: wavegen
app.kubernetes.io/instance: {{ include "wavegen.fullname" . | quote }}
{{- end -}}

{{- define "wavegen.labels" -}}
{{ include "wavegen.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: controller
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}

{{/* The controllers to run: one per shard, or one unsharded. Each: name, lease, selector labels, namespace selector. */}}
{{- define "wavegen.controllers" -}}
{{- $fullname := include "wavegen.fullname" . -}}
{{- $out := list -}}
{{- if .Values.shards -}}
{{- if ne .Values.scope "cluster" -}}{{- fail "shards need scope: cluster (a shard selects namespaces by label)" -}}{{- end -}}
{{- if or .Values.namespaceSelector .Values.watchNamespaces -}}{{- fail "shards replace namespaceSelector and watchNamespaces: set the selector per shard" -}}{{- end -}}
{{- $seen := dict -}}
{{- range .Values.shards -}}
{{- if hasKey $seen .name -}}{{- fail (printf "shard %q is listed twice" .name) -}}{{- end -}}
{{- $_ := set $seen .name true -}}
{{- $out = append $out (dict "name" (printf "%s-%s" $fullname .name) "shard" .name "namespaceSelector" .namespaceSelector) -}}
{{- end -}}
{{- else -}}
{{- if and .Values.namespaceSelector (ne .Values.scope "cluster") -}}{{- fail "namespaceSelector needs scope: cluster (it lists namespaces)" -}}{{- end -}}
{{- if and .Values.namespaceSelector .Values.watchNamespaces -}}{{- fail "namespaceSelector and watchNamespaces cannot be combined" -}}{{- end -}}
{{- $out = append $out (dict "name" $fullname "shard" "" "namespaceSelector" .Values.namespaceSelector) -}}
{{- end -}}
{{- toJson (dict "items" $out) -}}
{{- end -}}

{{/* Namespaces watched by an unsharded install ("" list: every namespace). */}}
{{- define "wavegen.watchNamespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- toJson .Values.watchNamespaces -}}
{{- else if eq .Values.scope "namespace" -}}
{{- toJson (list .Release.Namespace) -}}
{{- else -}}
[]
{{- end -}}
{{- end -}}

{{/* RBAC rules for the workload kinds, grouped by API group (sorted), resources in the order of `kinds`. */}}
{{- define "wavegen.workloadRules" -}}
{{- $known := dict "Deployment" (list "apps" "deployments") "StatefulSet" (list "apps" "statefulsets") "DaemonSet" (list "apps" "daemonsets") "CronJob" (list "batch" "cronjobs") "ReplicaSet" (list "apps" "replicasets") "Rollout" (list "argoproj.io" "rollouts") -}}
{{- $groups := dict -}}
{{- range .Values.kinds -}}
{{- $entry := get $known . -}}
{{- $group := index $entry 0 -}}
{{- $_ := set $groups $group (append (default (list) (get $groups $group)) (index $entry 1)) -}}
{{- end -}}
{{- range $group := keys $groups | sortAlpha }}
  - apiGroups: [{{ $group | quote }}]
    resources: {{ get $groups $group | toJson }}
    verbs: ["get", "list", "watch", "patch"]
{{- end -}}
{{- end -}}

{{- define "wavegen.watchRules" -}}
  # Read what the pod templates reference; no "get": the controller only lists and watches them.
  - apiGroups: [""]
    resources: ["configmaps", "secrets"]
    verbs: ["list", "watch"]
  # Workloads: "patch" writes only wavegen's own annotations; "get" re-reads one after a 409 Conflict.
{{- include "wavegen.workloadRules" . }}
  - apiGroups: ["events.k8s.io"]
    resources: ["events"]
    verbs: ["create"]
{{- end -}}
