package web

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/zrviz/zrviz/glossary"
	"github.com/zrviz/zrviz/imgio"
)

func TestGlossaryPage(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	doc, code := ts.getPage(t, "/glossary")
	if code != 200 {
		t.Fatalf("GET /glossary: %d", code)
	}
	all := glossary.All()
	for _, e := range all {
		sel := doc.Find(testid("term-" + e.Slug))
		if sel.Length() != 1 {
			t.Errorf("term-%s: %d elements, want 1", e.Slug, sel.Length())
			continue
		}
		if id, _ := sel.Attr("id"); id != "term-"+e.Slug {
			t.Errorf("term-%s: id %q (links point at #term-<slug>)", e.Slug, id)
		}
		txt := sel.Text()
		for _, want := range []string{e.Term, e.Text, e.OnDisk, e.Source} {
			if !strings.Contains(txt, want) {
				t.Errorf("term-%s does not show %q", e.Slug, want)
			}
		}
	}
	// Every link on the page to an entry lands on one.
	n := 0
	for _, href := range doc.Find(`a[href^="#term-"]`).Map(func(_ int, s *goquery.Selection) string { v, _ := s.Attr("href"); return v }) {
		n++
		if doc.Find(testid(strings.TrimPrefix(href, "#"))).Length() != 1 {
			t.Errorf("link %s leads nowhere", href)
		}
	}
	if n < len(all) {
		t.Errorf("%d links to entries, want at least one per entry (%d)", n, len(all))
	}
}

// TestTourTermsInGlossary builds the tour of every regular file of the demo (and of runs that fail)
// and checks that every term a stop names has a glossary entry: the player's popovers look them up.
func TestTourTermsInGlossary(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	si, err := ts.image(DemoID)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := si.Image.Files()
	if err != nil {
		t.Fatal(err)
	}
	var queries []url.Values
	for _, e := range entries {
		if e.Type != imgio.TypeFile {
			continue
		}
		queries = append(queries, url.Values{"image": {DemoID}, "path": {e.Path}, "mode": {"both"}})
	}
	queries = append(queries,
		url.Values{"image": {DemoID}, "path": {"/cases/prealloc.bin"}, "mode": {"per-block"}},
		url.Values{"image": {DemoID}, "path": {"/cases/contiguous.bin"}, "offset": {"1000"}, "length": {"20000"}, "mode": {"batched"}},
		url.Values{"sandbox": {"34304-34815 34304"}, "mode": {"both"}},     // EFSCORRUPTED: a repeated address
		url.Values{"sandbox": {"100 200"}, "mode": {"both"}},               // EFSCORRUPTED: below the main area
		url.Values{"image": {DemoID}, "path": {"/docs"}, "mode": {"both"}}, // EISDIR
	)
	kinds := map[string]bool{}
	for _, q := range queries {
		tgt, err := ts.resolveRun(context.Background(), q)
		if err != nil {
			t.Fatalf("%v: %v", q, err)
		}
		o, err := ts.outline(context.Background(), tgt)
		if err != nil {
			t.Fatalf("%v: %v", q, err)
		}
		for _, s := range o.Stops {
			kinds[s.Kind] = true
			if s.Title == "" || s.Text == "" {
				t.Errorf("%v: stop %q at step %d without a title or text", q, s.Kind, s.Step)
			}
			for _, term := range s.Terms {
				if _, ok := glossary.Lookup(term); !ok {
					t.Errorf("%v: stop %q names term %q, which the glossary lacks", q, s.Kind, term)
				}
			}
		}
	}
	for _, k := range []string{"start", "reserve", "new-in-run", "sit-update", "flush-discontiguous", "flush-end-of-chunk", "flush-end-of-range", "chunk", "prefree", "error", "end", "fill-zero"} {
		if !kinds[k] {
			t.Errorf("no run above has a %q stop: the test no longer covers its terms", k)
		}
	}
}
