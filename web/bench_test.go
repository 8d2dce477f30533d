package web

import (
	"encoding/json"
	"net/url"
	"testing"
)

// benchPlayer returns a player for the demo's bench64 whole file in mode,
// with the outline cache bypassed so each call pays for the pass.
func benchPlayer(b *testing.B, ts *testServer, query string) *player {
	b.Helper()
	si, err := ts.image(DemoID)
	if err != nil {
		b.Fatal(err)
	}
	q, _ := url.ParseQuery(query)
	params, err := parseRunParams(q)
	if err != nil {
		b.Fatal(err)
	}
	ts.outlines = newOutlineCache()
	p, err := ts.newPlayer(si, params)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkOutline measures the lockstep pass a new run costs (once per
// image/path/range/mode; cached afterwards).
func BenchmarkOutline(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	for _, q := range []string{
		"path=/seed/bench64.bin&mode=per-block",
		"path=/seed/bench64.bin&mode=both",
		"path=/cases/sparse-9g.bin&offset=9663676416&length=1048576&mode=both",
	} {
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				benchPlayer(b, ts, q)
			}
		})
	}
}

// BenchmarkSeek measures a seek in both mode (core checkpoint + lockstep
// replay), across the run.
func BenchmarkSeek(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	p := benchPlayer(b, ts, "path=/seed/bench64.bin&mode=both")
	total := p.total()
	i := int64(0)
	for b.Loop() {
		i = (i + 7919*cpEvery/3) % total
		if err := p.seek(i); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFrame measures building and encoding one frame of 256 events
// while playing bench64 in both mode: the server's cost per frame.
func BenchmarkFrame(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	p := benchPlayer(b, ts, "path=/seed/bench64.bin&mode=both")
	var evs []wireEvent
	bytes := 0
	for b.Loop() {
		if p.step() >= p.total() {
			p.seek(0)
		}
		evs, _ = p.forward(maxFrameEvents, evs[:0], maxFrameEvents, false)
		state, _ := p.state(false)
		f := frameMsg{V: 1, Type: "frame", Step: p.step(), Events: evs, State: state}
		buf, err := json.Marshal(&f)
		if err != nil {
			b.Fatal(err)
		}
		bytes = len(buf)
	}
	b.ReportMetric(float64(bytes), "bytes/frame")
}

// BenchmarkFullFrame measures a full frame (after a seek): every touched
// segment, the call tail and the slot map.
func BenchmarkFullFrame(b *testing.B) {
	ts := mustOpenServer(b, Config{})
	p := benchPlayer(b, ts, "path=/seed/bench64.bin&mode=both")
	p.seek(p.total() / 2)
	bytes := 0
	for b.Loop() {
		state, slots := p.state(true)
		buf, err := json.Marshal(&frameMsg{V: 1, Type: "frame", Step: p.step(), Full: true, State: state, Slots: slots})
		if err != nil {
			b.Fatal(err)
		}
		bytes = len(buf)
	}
	b.ReportMetric(float64(bytes), "bytes/frame")
}
