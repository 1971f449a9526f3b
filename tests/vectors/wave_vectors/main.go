// Command wave_vectors prints reference digests for wavegen's `wave` profile tests.
//
// It is written independently of wavegen's Python code and mirrors the shape
// of wave's config hash (wave-k8s/wave pkg/core hash.go, current master):
// a struct {configMaps, secrets map[string]map[string][]byte} filled from the
// references in discovery order, keyed by object name, marshalled with
// encoding/json and hashed with SHA-256, printed as lowercase hex.
// Only the standard library is used, so the values come straight from Go's
// own encoding/json (sorted map keys, HTML escaping, base64 for []byte).
//
// Run:  cd tests/vectors/wave_vectors && go run main.go   (values recorded with go1.26.8;
// any Go >= 1.22 gives the same, older Go escapes \b and \f differently)
package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

type nsName struct{ ns, name string }

type object struct {
	data   map[string]string // ConfigMap data (unused for Secrets)
	binary map[string][]byte // ConfigMap binaryData, or Secret data
}

type ref struct {
	secret  bool
	ns      string
	name    string
	allKeys bool
	keys    []string
}

type world struct {
	configMaps map[nsName]object
	secrets    map[nsName]object
}

func digest(w world, refs []ref) string {
	src := struct {
		ConfigMaps map[string]map[string][]byte `json:"configMaps"`
		Secrets    map[string]map[string][]byte `json:"secrets"`
	}{map[string]map[string][]byte{}, map[string]map[string][]byte{}}

	for _, r := range refs {
		objs, bucket := w.configMaps, src.ConfigMaps
		if r.secret {
			objs, bucket = w.secrets, src.Secrets
		}
		obj, ok := objs[nsName{r.ns, r.name}]
		if !ok {
			continue // absent children are skipped
		}
		if _, ok := bucket[r.name]; !ok {
			bucket[r.name] = map[string][]byte{}
		}
		m := bucket[r.name]
		if r.allKeys {
			for k, v := range obj.data {
				m[k] = []byte(v)
			}
			for k, v := range obj.binary {
				m[k] = v
			}
			continue
		}
		for _, k := range r.keys {
			if v, ok := obj.data[k]; ok {
				m[k] = []byte(v)
			}
			if v, ok := obj.binary[k]; ok {
				m[k] = v
			}
		}
	}
	b, err := json.Marshal(src)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func strs(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func bins(kv ...string) map[string][]byte {
	m := map[string][]byte{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = []byte(kv[i+1])
	}
	return m
}

func all(secret bool, ns, name string) ref { return ref{secret, ns, name, true, nil} }
func keys(secret bool, ns, name string, k ...string) ref {
	return ref{secret, ns, name, false, k}
}

const cm, sec = false, true

func main() {
	// wave's own test fixtures (test/utils/test_objects.go): example1..4, each with key1..key3.
	ex := world{map[nsName]object{}, map[nsName]object{}}
	for _, n := range []string{"example1", "example2", "example3", "example4"} {
		kv := strs("key1", n+":key1", "key2", n+":key2", "key3", n+":key3")
		ex.configMaps[nsName{"default", n}] = object{data: kv}
		ex.secrets[nsName{"default", n}] = object{binary: bins("key1", n+":key1", "key2", n+":key2", "key3", n+":key3")}
	}
	// References of wave's ExampleDeployment, in wave's discovery order.
	exRefs := []ref{
		all(sec, "default", "example1"), all(cm, "default", "example1"), // volumes
		all(cm, "default", "example1"), all(sec, "default", "example1"), // container1 envFrom
		all(cm, "default", "example2"), all(sec, "default", "example2"), // container2 envFrom
		keys(cm, "default", "example1", "key1"), keys(cm, "default", "example1", "key1"),
		keys(cm, "default", "example3", "key1"), keys(cm, "default", "example3", "key4"),
		keys(cm, "default", "example4", "key1"),
		keys(sec, "default", "example1", "key1"), keys(sec, "default", "example3", "key1"),
		keys(sec, "default", "example3", "key4"), keys(sec, "default", "example4", "key1"),
		keys(cm, "default", "example3", "key2"), keys(sec, "default", "example3", "key2"),
	}
	fmt.Println("wave_example_deployment", digest(ex, exRefs))

	fmt.Println("no_references", digest(world{}, nil))

	// HTML-special characters and non-ASCII in values (base64'd, so only bytes matter).
	html := world{map[nsName]object{
		{"default", "web"}: {data: strs("index.html", "<a href=\"/x?a=1&b=2\">caf\u00e9 \u2028 \u2713</a>\n")},
	}, map[nsName]object{}}
	fmt.Println("html_and_unicode_values", digest(html, []ref{all(cm, "default", "web")}))

	// Keys and names outside Kubernetes' alphabet, to pin Go's string escaping.
	odd := world{map[nsName]object{
		{"default", "we<ird>&"}: {data: strs("k\u2028\u2029", "v", "tab\tnl\nbs\bff\f\x01\x7f", "w", "\u00e9\u00e8", "x", "<", "y", "Z", "z")},
	}, map[nsName]object{}}
	fmt.Println("escaped_names_and_keys", digest(odd, []ref{all(cm, "default", "we<ird>&")}))

	// A Secret holding every byte value, and an empty value.
	all256 := make([]byte, 256)
	for i := range all256 {
		all256[i] = byte(i)
	}
	binw := world{map[nsName]object{}, map[nsName]object{
		{"default", "tls"}: {binary: map[string][]byte{"blob": all256, "empty": {}}},
	}}
	fmt.Println("binary_secret", digest(binw, []ref{all(sec, "default", "tls")}))

	// ConfigMap with data and binaryData.
	cmbin := world{map[nsName]object{
		{"default", "mixed"}: {data: strs("conf", "a=1"), binary: map[string][]byte{"logo.png": {0x89, 'P', 'N', 'G', 0, 0xff}}},
	}, map[nsName]object{}}
	fmt.Println("configmap_binary_data", digest(cmbin, []ref{all(cm, "default", "mixed")}))

	// Present objects with no data at all: both appear as {}.
	empty := world{
		map[nsName]object{{"default", "nothing"}: {}},
		map[nsName]object{{"default", "nothing"}: {}},
	}
	fmt.Println("empty_objects", digest(empty, []ref{all(cm, "default", "nothing"), all(sec, "default", "nothing")}))

	// Projected items narrow keys: only key1 counts; a change to key2 must not matter.
	narrow := func(key2 string) world {
		return world{map[nsName]object{
			{"default", "app"}: {data: strs("key1", "one", "key2", key2)},
		}, map[nsName]object{}}
	}
	fmt.Println("items_narrowed", digest(narrow("two"), []ref{keys(cm, "default", "app", "key1")}))
	fmt.Println("items_narrowed_other_key_changed", digest(narrow("TWO"), []ref{keys(cm, "default", "app", "key1")}))

	// env keyRef to a key the object lacks: the object appears with an empty map.
	missingKey := world{map[nsName]object{}, map[nsName]object{
		{"default", "creds"}: {binary: bins("user", "admin")},
	}}
	fmt.Println("keyref_missing_key", digest(missingKey, []ref{keys(sec, "default", "creds", "password")}))

	// extra-configmaps "other/shared,local": namespaced and local entries; a
	// same-named ConfigMap in the workload namespace merges into the same entry
	// (keyed by name only), the later reference winning on a clash.
	extra := world{map[nsName]object{
		{"other", "shared"}:   {data: strs("a", "from-other", "b", "only-other")},
		{"default", "shared"}: {data: strs("a", "from-default", "c", "only-default")},
		{"default", "local"}:  {data: strs("x", "1")},
	}, map[nsName]object{}}
	fmt.Println("extra_configmaps_namespaced", digest(extra, []ref{
		all(cm, "default", "shared"), // a volume, discovered first
		all(cm, "other", "shared"),   // extra-configmaps: other/shared
		all(cm, "default", "local"),  // extra-configmaps: local
	}))
}
