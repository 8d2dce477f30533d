package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestRunJSONEqualsAPI (issue 27: one result shape, one encoder): `zrviz run --json` and
// GET /api/images/demo/run answer the same object for a zero, a punch, a truncate and an unlink, in
// each mode.
func TestRunJSONEqualsAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--quiet"}, pw, io.Discard)
		pw.Close()
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	go io.Copy(io.Discard, pr)
	base := strings.Fields(line[strings.Index(line, "http://"):])[0]
	for _, tc := range []struct {
		args []string
		q    url.Values
	}{
		{[]string{"--offset", "5000", "--length", "100000", "/cases/holes.bin"},
			url.Values{"path": {"/cases/holes.bin"}, "offset": {"5000"}, "length": {"100000"}}},
		{[]string{"--op", "punch", "--offset", "5000", "--length", "800000", "/cases/holes.bin"},
			url.Values{"path": {"/cases/holes.bin"}, "op": {"punch"}, "offset": {"5000"}, "length": {"800000"}}},
		{[]string{"--op", "truncate", "--size", "1000000", "/cases/indirect.bin"},
			url.Values{"path": {"/cases/indirect.bin"}, "op": {"truncate"}, "size": {"1000000"}}},
		{[]string{"--op", "unlink", "/cases/indirect.bin"},
			url.Values{"path": {"/cases/indirect.bin"}, "op": {"unlink"}}},
	} {
		for _, mode := range []string{"per-block", "batched", "both"} {
			out, err := runMain(t, append([]string{"run", "--json", "--mode", mode}, tc.args...)...)
			if err != nil {
				t.Fatalf("%v: %v", tc.args, err)
			}
			q := tc.q
			q.Set("mode", mode)
			res, err := http.Get(base + "api/images/demo/run?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var cli, api any
			if err := json.Unmarshal([]byte(out), &cli); err != nil {
				t.Fatalf("%v: CLI JSON: %v", tc.args, err)
			}
			if err := json.Unmarshal(body, &api); err != nil || res.StatusCode != http.StatusOK {
				t.Fatalf("%v: API %d: %v %.200s", tc.q, res.StatusCode, err, body)
			}
			if !reflect.DeepEqual(cli, api) {
				t.Errorf("%v %s: the CLI and the API answer differently:\nCLI %.300s\nAPI %.300s", tc.args, mode, out, body)
			}
		}
	}
}
