package web

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/coder/websocket"
)

var writeTruth = flag.Bool("truth-vectors", false, "write static/jstest/testdata/truth.json (the node test of the page's state replays it)")

// readRaw returns the next server message as sent, and its type.
func (w *wsClient) readRaw() (json.RawMessage, string) {
	w.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, b, err := w.c.Read(ctx)
	if err != nil {
		w.tb.Fatalf("read: %v", err)
	}
	var m struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		w.tb.Fatal(err)
	}
	return b, m.Type
}

// slim drops what the model's state does not depend on (events but errors, stop texts,
// markers), to keep the recording small.
func slim(tb testing.TB, b json.RawMessage) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	delete(m, "markers")
	if evs, ok := m["events"].([]any); ok {
		// Only an error event, or a punch's or truncate's skipped address, leaves a mark in the
		// model (a rejected address); the rest flash.
		keep := []any{}
		for _, e := range evs {
			ev := e.(map[string]any)
			if ev["kind"] == "error" || ev["kind"] == "slot" && (ev["action"] == "skip-bounds" || ev["action"] == "skip-sit-bit") {
				delete(e.(map[string]any), "text")
				keep = append(keep, e)
			}
		}
		m["events"] = keep
	}
	if stops, ok := m["stops"].([]any); ok {
		for _, s := range stops {
			for _, k := range []string{"text", "title", "terms", "question"} {
				delete(s.(map[string]any), k)
			}
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// truthPath is one recorded navigation: the messages a page got after each control, and the
// messages a page loaded fresh at the step it reached.
type truthPath struct {
	Run   string            `json:"run"`
	Moves []truthMove       `json:"moves"`
	Start []json.RawMessage `json:"start"`
}

type truthMove struct {
	Control any               `json:"control"`
	Got     []json.RawMessage `json:"got"`
	Step    int64             `json:"step"`
	Fresh   []json.RawMessage `json:"fresh"`
}

// TestWriteTruthVectors records random navigation paths from the real server for
// static/jstest/truth.test.js, which drives state.js with them and compares each step's model with
// that of a fresh load: go test ./web -run TestWriteTruthVectors -truth-vectors.
func TestWriteTruthVectors(t *testing.T) {
	if !*writeTruth {
		t.Skip("writes test data: -truth-vectors")
	}
	ts := mustOpenServer(t, Config{})
	r := rand.New(rand.NewPCG(16, 16))
	var paths []truthPath
	for _, run := range []string{"image=demo&path=/cases/fragmented.bin&mode=both", "image=demo&path=/cases/prealloc.bin&mode=both",
		"image=demo&path=/cases/holes.bin&mode=both", "sandbox=" + "4096-4223+NEW*3+9000-9100+NULL*5+12000-12040" + "&mode=both",
		// Issue 28: a punch (NULL slots end the batched runs) and a truncate (node blocks freed).
		"image=demo&path=/cases/holes.bin&op=punch&offset=0&length=8MiB&mode=both",
		"image=demo&path=/cases/indirect.bin&op=truncate&size=1MiB&mode=both"} {
		for range 3 {
			w := ts.dialWS(t, run)
			h, _ := w.readRaw()
			p := truthPath{Run: run, Start: []json.RawMessage{slim(t, h)}}
			var hello serverMsg
			if err := json.Unmarshal(h, &hello); err != nil {
				t.Fatal(err)
			}
			total := hello.TotalSteps
			for range 8 {
				var c map[string]any
				switch r.IntN(7) {
				case 0:
					c = map[string]any{"type": "step", "n": 1 + r.IntN(40)}
				case 1:
					c = map[string]any{"type": "step", "n": -1 - r.IntN(40)}
				case 2:
					c = map[string]any{"type": "seek", "step": r.Int64N(total + 1)}
				case 3:
					c = map[string]any{"type": []string{"reset", "end"}[r.IntN(2)]}
				case 4:
					c = map[string]any{"type": "nextCall"}
				case 5:
					c = map[string]any{"type": "gotoSlot", "slot": hello.Range.Start + uint64(r.Int64N(int64(hello.Range.End-hello.Range.Start)+1))}
				default:
					c = map[string]any{"type": "step", "n": 300 + r.IntN(600)}
				}
				w.send(c)
				m := truthMove{Control: c}
				for {
					b, typ := w.readRaw()
					m.Got = append(m.Got, slim(t, b))
					if typ == "frame" {
						var f serverMsg
						if err := json.Unmarshal(b, &f); err != nil {
							t.Fatal(err)
						}
						m.Step = f.Step
						break
					}
				}
				fw := ts.dialWS(t, fmt.Sprintf("%s&step=%d", run, m.Step))
				fh, _ := fw.readRaw()
				m.Fresh = []json.RawMessage{slim(t, fh)}
				fw.c.Close(websocket.StatusNormalClosure, "")
				p.Moves = append(p.Moves, m)
			}
			w.c.Close(websocket.StatusNormalClosure, "")
			paths = append(paths, p)
		}
	}
	b, err := json.Marshal(map[string]any{"comment": "written by go test ./web -run TestWriteTruthVectors -truth-vectors", "paths": paths})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("../static/jstest/testdata/truth.json", b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d paths, %d bytes", len(paths), len(b))
}
