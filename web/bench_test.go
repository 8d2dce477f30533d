package web

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/zrviz/zrviz/player"
)

// benchSession returns a session (without a socket) playing query on the demo, with the outline
// cache bypassed so each call pays for the pass.
func benchSession(b *testing.B, ts *testServer, query string) *session {
	b.Helper()
	q, _ := url.ParseQuery(query)
	q.Set("image", DemoID)
	t, err := ts.resolveRun(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	ts.outlines = newOutlineCache(nil)
	ss := &session{s: ts.Server, t: t, c: &conn{box: newMailbox(nil), log: ts.log}, pace: "30", done: map[int]bool{}}
	if err := ss.open(context.Background(), t); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ss.release)
	return ss
}

// BenchmarkOutline measures the lockstep pass a new run costs (once per image, file, range and mode;
// cached afterwards).
func BenchmarkOutline(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	for _, q := range []string{
		"path=/seed/bench64.bin&mode=per-block",
		"path=/seed/bench64.bin&mode=both",
		"path=/cases/sparse-9g.bin&offset=9663676416&length=1048576&mode=both",
	} {
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				benchSession(b, ts, q)
			}
		})
	}
}

// BenchmarkSeek measures a seek in both mode (core checkpoint + lockstep replay), across the run.
func BenchmarkSeek(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	ss := benchSession(b, ts, "path=/seed/bench64.bin&mode=both")
	total := ss.o.Total
	i := int64(0)
	for b.Loop() {
		i = (i + 7919*1024/3) % total
		if err := ss.p.Goto(i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFrame measures building and encoding one frame of 256 events while playing bench64 in
// both mode: the server's cost per frame.
func BenchmarkFrame(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	ss := benchSession(b, ts, "path=/seed/bench64.bin&mode=both")
	bytes := 0
	for b.Loop() {
		if ss.p.Done() {
			ss.p.Goto(0)
		}
		ss.forward(maxFrameEvents)
		ss.sendFrame(false)
		bytes = len(ss.c.box.take())
	}
	b.ReportMetric(float64(bytes), "bytes/frame")
}

// BenchmarkFullFrame measures a full frame (after a seek): every recently touched segment, the call
// tail and the slots the run has changed.
func BenchmarkFullFrame(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	ss := benchSession(b, ts, "path=/seed/bench64.bin&mode=both")
	ss.p.Goto(ss.o.Total / 2)
	bytes := 0
	for b.Loop() {
		f := &frameMsg{V: protocolVersion, Type: "frame", Step: ss.p.Step(), Full: true,
			State: ss.p.State(&player.Tracker{}, true), Changed: ss.p.Changed(ss.o.Range.Start, ss.o.Range.End)}
		buf, err := json.Marshal(f)
		if err != nil {
			b.Fatal(err)
		}
		bytes = len(buf)
	}
	b.ReportMetric(float64(bytes), "bytes/frame")
}
