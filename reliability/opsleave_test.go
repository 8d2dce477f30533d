package reliability

import (
	"bytes"
	"compress/gzip"
	"net/url"
	"strings"
	"testing"
	"time"
)

// gzipOf compresses b for an upload.
func gzipOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOpsWorkEndsWithItsClient: issue 27 against the built binary. Every request that runs a
// sequence of operations (the diff page's ops= check, the after-check's before=, the next panel's
// before=) runs them through the one runner with the request's context: a client that leaves
// mid-work leaves no CPU spent a second later. The operations are the attack: writes of
// 1 GiB, fsyncs, foreground gc and checkpoints, on two small uploads of one filesystem.
func TestOpsWorkEndsWithItsClient(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: the built binary")
	}
	t.Logf("load average %s", LoadAverage())
	basic := gunzipFile(t, "../imgio/testdata/basic.img.gz")
	other := bytes.Clone(basic)
	other[len(other)-1] ^= 0xff // the last block is free: the same filesystem, another upload
	e := newEnv(t)
	p := freshServer(t, e)
	pid := p.cmd.Process.Pid
	a := uploadTo(t, p.url, "a.img.gz", gzipOf(t, basic)).ID
	b := uploadTo(t, p.url, "b.img.gz", gzipOf(t, other)).ID
	if a == b {
		t.Fatal("the two uploads are one image")
	}
	var lines []string
	for range 15 {
		lines = append(lines, "write /hello.txt 0 1GiB", "fsync /hello.txt", "gc 1", "checkpoint")
	}
	before := url.Values{"path": {"/hello.txt"}, "offset": {"0"}, "length": {"4096"}, "before": lines}
	next := url.Values{"now": {"100"}, "policy": {"greedy"}}
	for k, v := range before {
		next[k] = v
	}
	after := url.Values{"after": {b}}
	for k, v := range before {
		after[k] = v
	}
	for _, tc := range []struct{ name, u string }{
		{"diff ops=", p.url + "/diff?" + url.Values{"a": {a}, "b": {b}, "ops": {strings.Join(lines, "\n")}}.Encode()},
		{"after-check", p.url + "/api/images/" + a + "/aftercheck?" + after.Encode()},
		{"next panel", p.url + "/api/images/" + a + "/next?" + next.Encode()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code := abandon(tc.u, nil, 150*time.Millisecond)
			c := cpuAfter(t, pid, time.Second)
			t.Logf("%s abandoned after 150 ms (status %d: 0 = no answer yet): the server used %v of CPU in the next second", tc.name, code, c)
			if c > idleCPU {
				t.Errorf("%s: the work went on after its client left: %v of CPU in a second", tc.name, c)
			}
		})
	}
}
