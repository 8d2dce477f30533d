package reliability

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestOpsWorkEndsWithItsClient: issue 27 against the built binary. Every request that runs a
// sequence of operations (the diff page's ops= check, the after-check's before=, the next panel's
// before=) runs them through the one runner with the request's context: a client that leaves
// mid-work leaves no CPU spent a second later (what the diff page did before: 37 CPU-s to its
// 60 s deadline, and the next panel and after-check ran on after their clients left). The operations are the attack: writes of
// 1 GiB, fsyncs, foreground gc and checkpoints, on two small uploads of one filesystem.
func TestOpsWorkEndsWithItsClient(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: the built binary")
	}
	t.Logf("load average %s", LoadAverage())
	// Two uploads of one filesystem (the demo, and the demo with its free last block changed):
	// the sequence below ran 37 CPU-s to the 60 s deadline on the diff page before it took the
	// request's context.
	demo := mustDemo(t)
	e := newEnv(t)
	p := freshServer(t, e)
	pid := p.cmd.Process.Pid
	a := uploadTo(t, p.url, "a.img.zst", zstdOf(t, demo, nil)).ID
	b := uploadTo(t, p.url, "b.img.zst", zstdOf(t, demo, []Patch{{Off: int64(len(demo)) - 1, Data: []byte{0xff}}})).ID
	if a == b {
		t.Fatal("the two uploads are one image")
	}
	var lines []string
	for range 15 {
		lines = append(lines, "write /seed/bench64.bin 0 1GiB", "fsync /seed/bench64.bin", "gc 1", "checkpoint")
	}
	before := url.Values{"path": {"/seed/bench64.bin"}, "offset": {"0"}, "length": {"4096"}, "before": lines}
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
			code := abandon(tc.u, nil, 300*time.Millisecond)
			// The operation under way when the client left runs to its end (the runner checks the
			// context between operations; one write of 1 GiB with its collections takes a few
			// hundred ms here): a second later nothing may run.
			first := cpuAfter(t, pid, time.Second)
			c := cpuAfter(t, pid, time.Second)
			t.Logf("%s abandoned after 300 ms (status %d: 0 = no answer yet): the server used %v of CPU in the next second, %v in the one after", tc.name, code, first, c)
			if c > idleCPU {
				t.Errorf("%s: the work went on after its client left: %v of CPU in the second after the next", tc.name, c)
			}
		})
	}
}
