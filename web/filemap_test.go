package web

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"

	"github.com/PuerkitoBio/goquery"
	"github.com/zrviz/zrviz/imgio"
)

// TestMapPages: for every file of the demo and of the fixtures, the map's pages put together are
// imgio's Extents, whatever the page size (1, 2, 3, 7, 64 extents and the default), each page holds
// at most its limit and starts where the last one said; a page from the middle of an extent starts
// there.
func TestMapPages(t *testing.T) {
	imgs := map[string]*imgio.Image{}
	demo, err := imgio.OpenFileContext(context.Background(), testutil.DemoImage(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer demo.Close()
	imgs["demo"] = demo
	for _, name := range []string{"basic", "features", "segs4"} {
		img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../imgio/testdata/"+name+".img.gz"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer img.Close()
		imgs[name] = img
	}
	ctx := context.Background()
	files := 0
	for name, img := range imgs {
		ents, err := img.Files()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Type != imgio.TypeFile {
				continue
			}
			f, err := img.Lookup(e.Path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := f.Extents()
			if err != nil {
				t.Fatal(err)
			}
			files++
			for _, limit := range []int{1, 2, 3, 7, 64, defaultMapPage} {
				var got []imgio.Extent
				from := uint64(0)
				for pages := 0; ; pages++ {
					ext, next, err := mapPage(ctx, img, f, from, limit)
					if err != nil {
						t.Fatalf("%s %s from %d: %v", name, e.Path, from, err)
					}
					if len(ext) > limit || (next != 0 && (len(ext) != limit || next <= from)) {
						t.Fatalf("%s %s from %d limit %d: %d extents, next %d", name, e.Path, from, limit, len(ext), next)
					}
					got = append(got, ext...)
					if next == 0 {
						break
					}
					if pages > len(want) {
						t.Fatalf("%s %s: more pages than extents", name, e.Path)
					}
					from = next
				}
				if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("%s %s limit %d: pages\n%v\nwant Extents\n%v", name, e.Path, limit, got, want)
				}
			}
			// From the middle of the first extent longer than one block.
			for _, x := range want {
				if x.Count > 1 {
					ext, _, err := mapPage(ctx, img, f, x.Index+1, 1)
					if err != nil || len(ext) != 1 || ext[0].Index != x.Index+1 || ext[0].Count != x.Count-1 || ext[0].State != x.State {
						t.Errorf("%s %s from %d: %v %v, want the rest of %+v", name, e.Path, x.Index+1, ext, err, x)
					}
					break
				}
			}
		}
	}
	if files < 20 {
		t.Errorf("only %d files checked", files)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	f, err := demo.Lookup("/seed/bench64.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := mapPage(cancelled, demo, f, 0, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestMapAPIPages: the map API pages with ?from=&limit=, says where the next page starts, and
// refuses bad values; the file page embeds at most fileMapExtents extents and links to the rest.
func TestMapAPIPages(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	var all mapBody
	if code := ts.get(t, "/api/images/demo/map?path=/cases/fragmented.bin", &all); code != 200 || all.Next != 0 || len(all.Extents) < 64 {
		t.Fatalf("whole map: %d, %d extents, next %d", code, len(all.Extents), all.Next)
	}
	var got []imgio.Extent
	for from := uint64(0); ; {
		var m mapBody
		if code := ts.get(t, fmt.Sprintf("/api/images/demo/map?path=/cases/fragmented.bin&from=%d&limit=10", from), &m); code != 200 || m.From != from {
			t.Fatalf("from %d: %d, from %d", from, code, m.From)
		}
		got = append(got, m.Extents...)
		if m.Next == 0 {
			break
		}
		from = m.Next
	}
	if !reflect.DeepEqual(got, all.Extents) {
		t.Errorf("pages of 10 put together differ from the whole map")
	}
	for _, q := range []string{"limit=0", "limit=65537", "limit=x", "from=-1", "from=x"} {
		var e struct{ Error string }
		if code := ts.get(t, "/api/images/demo/map?path=/cases/fragmented.bin&"+q, &e); code != 400 || e.Error == "" {
			t.Errorf("%s: %d %q, want 400", q, code, e.Error)
		}
	}
	// The file page of a small file shows everything and no "more" note.
	res, err := ts.ts.Client().Get(ts.ts.URL + "/images/demo/file?path=" + url.QueryEscape("/cases/fragmented.bin"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if doc.Find(`[data-testid="map-more"]`).Length() != 0 || doc.Find(`[data-testid="dnodes-more"]`).Length() != 0 {
		t.Errorf("a small file's page says the map is cut")
	}
	if !strings.Contains(doc.Find("#extents-data").Text(), `"index"`) {
		t.Errorf("no extents embedded")
	}
}
