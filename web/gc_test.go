package web

import (
	"strings"
	"testing"
)

// TestGCAPI: the demo image's "what happens next": a foreground call's victim leaves dirty and ends
// prefree, the checkpoint makes it free, and every op lists the segments it changed.
func TestGCAPI(t *testing.T) {
	t.Parallel()
	ts := mustOpenServer(t, Config{})
	var body struct {
		Now     uint64 `json:"now"`
		Initial []gcSegment
		Ops     []struct {
			Op      string      `json:"op"`
			Type    string      `json:"type"`
			Victim  *uint32     `json:"victim"`
			Freed   []uint32    `json:"freed"`
			Changed []gcSegment `json:"changed"`
		} `json:"ops"`
	}
	if code := ts.get(t, "/api/images/demo/gc?op=gc+1&op=checkpoint&op=gc+0&now=5", &body); code != 200 {
		t.Fatalf("status %d", code)
	}
	if body.Now != 5 || len(body.Ops) != 3 || body.Ops[0].Type != "FG" || body.Ops[0].Victim == nil {
		t.Fatalf("body %+v", body)
	}
	v := *body.Ops[0].Victim
	if body.Initial[v].Class != "dirty" {
		t.Errorf("victim %d was %s, want dirty", v, body.Initial[v].Class)
	}
	prefree := false
	for _, c := range body.Ops[0].Changed {
		prefree = prefree || c.Segno == v && c.Class == "prefree" && c.Valid == 0
	}
	if !prefree {
		t.Errorf("gc 1 changed %+v: victim %d not prefree", body.Ops[0].Changed, v)
	}
	if f := body.Ops[1].Freed; len(f) != 1 || f[0] != v {
		t.Errorf("checkpoint freed %v, want [%d]", f, v)
	}
	// The checkpoint wrote the dnodes gc 1's moves dirtied (f2fs_sync_node_pages), which the model
	// does not place: the node segments' counts are marked unsure, and only those.
	unsure := 0
	for _, c := range body.Ops[1].Changed {
		if c.Unsure {
			unsure++
			if c.Valid == 0 && c.Class == "free" {
				t.Errorf("segment %d marked unsure while free", c.Segno)
			}
		}
	}
	if unsure == 0 {
		t.Errorf("the checkpoint after gc 1 changed %+v: no node segment marked unsure", body.Ops[1].Changed)
	}
	if body.Ops[2].Type != "BG" {
		t.Errorf("third op %+v", body.Ops[2])
	}
	for _, bad := range []string{"/api/images/demo/gc", "/api/images/demo/gc?op=gc+2", "/api/images/demo/gc?op=gc+1&now=x"} {
		var e errorBody
		if code := ts.get(t, bad, &e); code != 400 || e.Code != EINVALID || !strings.Contains(e.Error, "op") && !strings.Contains(e.Error, "now") {
			t.Errorf("GET %s = %d %q, want 400", bad, code, e.Error)
		}
	}
}
