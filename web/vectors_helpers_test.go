package web

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// checkVectors holds the node tests' vectors file name (static/jstest/testdata) to v, encoded as
// indented JSON: with write it rewrites the file, else the test fails when the file is stale and
// says the command (how) that rewrites it.
func checkVectors(t *testing.T, name string, v any, write bool, how string) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if write {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if old, err := os.ReadFile(name); err != nil || !bytes.Equal(old, b) {
		t.Errorf("%s is stale (%v): %s", name, err, how)
	}
}
