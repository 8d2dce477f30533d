package web

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"net/url"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/zrviz/zrviz/player"
)

var writePaceVectors = flag.Bool("pace-vectors", false, "write static/jstest/testdata/paces.json (the node tests of pace.js and permalink.js read it)")

// TestPaceMenu: the run page's pace menu is pacePresets, in order, with the default selected and
// "custom" last (disabled), and the server takes every value the menu offers and no other.
// static/jstest/testdata/paces.json is the menu as rendered, so the node tests read the paces as
// the page does; the test fails when the file is stale, and -pace-vectors rewrites it.
func TestPaceMenu(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	doc, status := ts.getPage(t, "/images/demo/run?"+url.Values{"path": {"/seed/bench64.bin"}}.Encode())
	if status != 200 {
		t.Fatalf("run page: status %d", status)
	}
	type option struct {
		Value           string `json:"value"`
		Label           string `json:"label"`
		DefaultSelected bool   `json:"defaultSelected"`
		Disabled        bool   `json:"disabled"`
	}
	var menu []option
	doc.Find(testid("pace") + " option").Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("value")
		_, sel := s.Attr("selected")
		_, dis := s.Attr("disabled")
		menu = append(menu, option{Value: v, Label: s.Text(), DefaultSelected: sel, Disabled: dis})
	})
	var want []option
	for _, p := range pacePresets() {
		want = append(want, option{Value: p.Value, Label: p.Label, DefaultSelected: p.Value == defaultPace})
	}
	want = append(want, option{Value: "custom", Label: "custom", Disabled: true})
	if got, w := mustJSON(t, menu), mustJSON(t, want); !bytes.Equal(got, w) {
		t.Errorf("the pace menu is\n%s\nwant\n%s", got, w)
	}
	for _, o := range menu {
		_, err := decodeControl([]byte(`{"type":"pace","pace":` + string(mustJSON(t, o.Value)) + `}`))
		if (err == nil) != !o.Disabled {
			t.Errorf("the pace control with the menu's %q: %v", o.Value, err)
		}
	}
	for _, bad := range []string{"", "20", "30s", " 30", "STEP", "custom"} {
		if _, err := decodeControl([]byte(`{"type":"pace","pace":"` + bad + `"}`)); err == nil {
			t.Errorf("the pace control took %q", bad)
		}
	}

	checkVectors(t, "../static/jstest/testdata/paces.json", map[string]any{"comment": "written by go test ./web -run TestPaceMenu -pace-vectors", "menu": menu},
		*writePaceVectors, "go test ./web -run TestPaceMenu -pace-vectors")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPaceSpeeds: a pace plays the whole run in its seconds, "step" at one step a second, within
// the speed bounds; "" (a speed set in steps per second) keeps the speed.
func TestPaceSpeeds(t *testing.T) {
	for _, tt := range []struct {
		total int64
		want  map[string]float64 // steps a second by pace
	}{
		{3000, map[string]float64{"10": 300, "30": 100, "60": 50, "180": 3000.0 / 180, "step": 1}},
		{1, map[string]float64{"10": 0.1, "30": minSpeed, "60": minSpeed, "180": minSpeed, "step": 1}},
		{1 << 40, map[string]float64{"10": maxSpeed, "30": maxSpeed, "60": maxSpeed, "180": maxSpeed, "step": 1}},
	} {
		if len(tt.want) != len(pacePresets()) {
			t.Fatalf("the test knows %d paces, the server %d", len(tt.want), len(pacePresets()))
		}
		for _, p := range pacePresets() {
			ss := &session{o: &player.Outline{Total: tt.total}}
			ss.setPace(p.Value)
			if w, ok := tt.want[p.Value]; !ok || math.Abs(ss.speed-w) > 1e-12*w || ss.pace != p.Value {
				t.Errorf("%d steps at pace %s: %g steps a second (pace %q), want %g", tt.total, p.Value, ss.speed, ss.pace, w)
			}
		}
		ss := &session{o: &player.Outline{Total: tt.total}, speed: 7}
		ss.setPace("")
		if ss.speed != 7 {
			t.Errorf("setPace(\"\") changed the speed to %g", ss.speed)
		}
	}
}
