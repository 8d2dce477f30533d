package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// getPage fetches path and parses it as HTML; it returns the status too.
func (ts *testServer) getPage(tb testing.TB, path string) (*goquery.Document, int) {
	tb.Helper()
	res, err := http.Get(ts.ts.URL + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		tb.Fatalf("GET %s: Content-Type %q, want text/html", path, ct)
	}
	doc, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
	return doc, res.StatusCode
}

func testid(id string) string { return `[data-testid="` + id + `"]` }

func TestPages(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	runURL := "/images/demo/run?" + url.Values{"path": {"/seed/bench64.bin"}, "mode": {"batched"}, "step": {"42"}}.Encode()
	tests := []struct {
		name   string
		path   string
		status int
		want   []string // data-testid values that must be present
		check  func(t *testing.T, doc *goquery.Document)
	}{
		{
			name: "images", path: "/", status: 200,
			want: []string{"image-list", "image-item", "upload-input", "dropzone", "upload-progress", "upload-message", "tour"},
			check: func(t *testing.T, doc *goquery.Document) {
				if doc.Find(testid("image-item")+`[data-id="demo"]`).Length() != 1 {
					t.Error("the demo image is not listed with id demo")
				}
				if v, _ := doc.Find(testid("dropzone")).Attr("data-max-upload"); v != "8589934592" {
					t.Errorf("data-max-upload = %q, want the 8 GiB default", v)
				}
			},
		},
		{
			name: "image", path: "/images/demo", status: 200,
			want: []string{"volume-summary", "volume-counters", "segment-map", "segment-legend", "file-tree", "segment-detail"},
			check: func(t *testing.T, doc *goquery.Document) {
				if v, _ := doc.Find(testid("segment-map")).Attr("data-segments"); v != "120" {
					t.Errorf("segment map data-segments = %q, want 120 main segments", v)
				}
				// The demo's file to zero first is above the tree, not its last rows (issue 20).
				start := doc.Find(testid("image-start-link")).First()
				if href, _ := start.Attr("href"); !strings.Contains(href, "path=%2Fseed%2Fbench64.bin") || start.Parents().Filter(testid("file-tree")).Length() != 0 {
					t.Errorf("first start link %q, want bench64's run above the tree", href)
				}
				link := doc.Find(testid("file-entry") + `[data-path="/seed/bench64.bin"] ` + testid("file-link"))
				href, _ := link.Attr("href")
				if href != "/images/demo/file?path=%2Fseed%2Fbench64.bin" {
					t.Errorf("bench64 link = %q", href)
				}
				if got := doc.Find(testid("file-entry") + `[data-path="/docs/a/b/c"]`).HasClass("depth-4"); !got {
					t.Error("/docs/a/b/c is not indented to depth 4")
				}
				if !strings.Contains(doc.Find(testid("volume-summary")).Text(), "4,096") { // grouped, as the page groups numbers
					t.Error("volume summary lacks main_blkaddr 4096")
				}
			},
		},
		{
			name: "file", path: "/images/demo/file?path=/seed/bench64.bin", status: 200,
			want: []string{"inode-summary", "block-map", "block-map-canvas", "node-structure", "extents", "run-presets"},
			check: func(t *testing.T, doc *goquery.Document) {
				// imgio/demo/README.md: 3 runs, 17 dnode chunks.
				if n := doc.Find(testid("extent")).Length(); n != 3 {
					t.Errorf("%d extent rows, want 3", n)
				}
				if n := doc.Find(testid("dnode")).Length(); n != 17 {
					t.Errorf("%d dnode rows, want 17", n)
				}
				if n := doc.Find(testid("preset")).Length(); n != 3 {
					t.Errorf("%d presets, want whole file, first MiB, unaligned", n)
				}
				if doc.Find("script#extents-data[type='application/json']").Length() != 1 {
					t.Error("no extents JSON for the block map")
				}
			},
		},
		{
			name: "run", path: runURL, status: 200,
			want: []string{"player", "controls", "seek", "markers", "run-status", "slots-canvas", "sit-canvas",
				"calls-panel", "stat-calls-per-block", "stat-calls-batched", "stat-blocks-invalidated",
				"narration", "legend", "frame-p95", "frame-samples", "mode-select", "btn-play", "btn-next-flush", "btn-end"},
			check: func(t *testing.T, doc *goquery.Document) {
				p := doc.Find(testid("player"))
				for attr, want := range map[string]string{"data-image": "demo", "data-path": "/seed/bench64.bin",
					"data-mode": "batched", "data-step": "42", "data-offset": "0", "data-length": "67108864", "data-run-end": "false"} {
					if v, _ := p.Attr(attr); v != want {
						t.Errorf("%s = %q, want %q", attr, v, want)
					}
				}
				if v, _ := doc.Find(testid("mode-select") + " option[selected]").Attr("value"); v != "batched" {
					t.Errorf("selected mode %q, want batched", v)
				}
				if !doc.Find("body").HasClass("player") {
					t.Error("body lacks the player class that fits the page to one screen")
				}
			},
		},
		{
			// Issue 28: the run form, the breadcrumb and the h1 name the call played; the form's
			// fields are the call's (a truncate's size, a punch's range without KEEP_SIZE).
			name: "run of a truncate", path: "/images/demo/run?path=/cases/indirect.bin&op=truncate&size=1MiB", status: 200,
			want: []string{"player", "op-select", "size-field", "range-fields", "row-nodes-freed"},
			check: func(t *testing.T, doc *goquery.Document) {
				p := doc.Find(testid("player"))
				for attr, want := range map[string]string{"data-op": "truncate", "data-offset": "1048576", "data-length": "0"} {
					if v, _ := p.Attr(attr); v != want {
						t.Errorf("%s = %q, want %q", attr, v, want)
					}
				}
				if v, _ := doc.Find(testid("op-select") + " option[selected]").Attr("value"); v != "truncate" {
					t.Errorf("selected call %q, want truncate", v)
				}
				size := doc.Find(testid("size-field"))
				if v, _ := size.Attr("value"); v != "1048576" || size.Is("[disabled]") {
					t.Errorf("size field %q (disabled %v)", v, size.Is("[disabled]"))
				}
				if !doc.Find("#f-offset").Is("[disabled]") || !doc.Find(testid("range-fields")).Is("[hidden]") || !doc.Find(testid("keep-size")).Is("[disabled]") {
					t.Error("a truncate's form sends its range or KEEP_SIZE")
				}
				if h1 := doc.Find("h1").Text(); !strings.Contains(h1, "truncate of /cases/indirect.bin to 1,048,576 bytes") {
					t.Errorf("h1 %q", h1)
				}
				if c := doc.Find("nav.crumbs").Text(); !strings.Contains(c, "truncate to 1 MiB") {
					t.Errorf("breadcrumb %q", c)
				}
				if title := doc.Find("title").Text(); !strings.Contains(title, "/cases/indirect.bin · truncate to 1 MiB") {
					t.Errorf("title %q", title)
				}
			},
		},
		{
			name: "run of a punch", path: "/images/demo/run?path=/cases/holes.bin&op=punch&offset=4096&length=8192&keepSize=true", status: 200,
			want: []string{"player", "op-select", "range-fields"},
			check: func(t *testing.T, doc *goquery.Document) {
				if v, _ := doc.Find(testid("player")).Attr("data-op"); v != "punch" {
					t.Errorf("data-op %q", v)
				}
				if !doc.Find(testid("keep-size")).Is("[disabled]") || doc.Find("#f-offset").Is("[disabled]") || !doc.Find(testid("size-field")).Is("[disabled]") {
					t.Error("a punch's form: the range, no KEEP_SIZE (punch always keeps the size), no size")
				}
				if h1 := doc.Find("h1").Text(); !strings.Contains(h1, "fallocate(PUNCH_HOLE) of /cases/holes.bin") {
					t.Errorf("h1 %q", h1)
				}
			},
		},
		{
			// Issue 36: an unlink's form sends the path alone; the page names the call.
			name: "run of an unlink", path: "/images/demo/run?path=/cases/indirect.bin&op=unlink", status: 200,
			want: []string{"player", "op-select", "row-nodes-freed"},
			check: func(t *testing.T, doc *goquery.Document) {
				if v, _ := doc.Find(testid("player")).Attr("data-op"); v != "unlink" {
					t.Errorf("data-op %q", v)
				}
				if v, _ := doc.Find(testid("op-select") + " option[selected]").Attr("value"); v != "unlink" {
					t.Errorf("selected call %q, want unlink", v)
				}
				if !doc.Find("#f-offset").Is("[disabled]") || !doc.Find(testid("size-field")).Is("[disabled]") || !doc.Find(testid("keep-size")).Is("[disabled]") {
					t.Error("an unlink's form sends a range, a size or KEEP_SIZE")
				}
				if h1 := doc.Find("h1").Text(); !strings.Contains(h1, "unlink of /cases/indirect.bin") {
					t.Errorf("h1 %q", h1)
				}
			},
		},
		// What the model does not follow is refused (422), never played: a symlink's own inode.
		{name: "run of an unlink of a symlink", path: "/images/demo/run?path=/docs/contiguous.link&op=unlink", status: 422},
		{name: "run of an op the player does not play", path: "/images/demo/run?path=/cases/holes.bin&op=collapse", status: 400},
		{name: "directory", path: "/images/demo/file?path=/docs", status: 200, want: []string{"inode-summary", "block-map"}},
		{name: "inline file", path: "/images/demo/file?path=/cases/tiny.txt", status: 200, want: []string{"inode-summary", "block-map"}},
		{name: "symlink", path: "/images/demo/file?path=/docs/contiguous.link", status: 200, want: []string{"inode-summary"}},
		{name: "sparse file", path: "/images/demo/file?path=/cases/sparse-9g.bin", status: 200, want: []string{"block-map", "node-structure"},
			check: func(t *testing.T, doc *goquery.Document) {
				// imgio/demo/README.md: data only under i_nid[4], 9 GiB in.
				if n := doc.Find(testid("extent")).Length(); n < 2 {
					t.Errorf("%d extents, want the holes and the data at 9 GiB", n)
				}
			}},
		{name: "run of a directory", path: "/images/demo/run?path=/docs", status: 200, want: []string{"player"}},
		{name: "run of a symlink", path: "/images/demo/run?path=/docs/contiguous.link", status: 200, want: []string{"player"},
			check: func(t *testing.T, doc *goquery.Document) {
				// open(2) follows the link: the player zeroes ../cases/contiguous.bin (4 MiB).
				p := doc.Find(testid("player"))
				for attr, want := range map[string]string{"data-path": "/cases/contiguous.bin", "data-length": "4194304"} {
					if v, _ := p.Attr(attr); v != want {
						t.Errorf("%s = %q, want %q", attr, v, want)
					}
				}
			}},
		{name: "unknown image", path: "/images/nope", status: 404, want: []string{"error-page"}},
		{name: "unknown file", path: "/images/demo/file?path=/nope", status: 404, want: []string{"error-page"}},
		{name: "run of unknown file", path: "/images/demo/run?path=/nope", status: 404, want: []string{"error-page"}},
		{name: "no path", path: "/images/demo/file", status: 400, want: []string{"error-page"}},
		{name: "bad mode", path: "/images/demo/run?path=/seed/bench64.bin&mode=fast", status: 400, want: []string{"error-page"}},
		{name: "bad offset", path: "/images/demo/run?path=/seed/bench64.bin&offset=x", status: 400, want: []string{"error-page"}},
		{name: "unknown page", path: "/no/such/page", status: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path == "/no/such/page" {
				// The router's 404 is the JSON error of the API.
				if got := ts.get(t, tt.path, nil); got != tt.status {
					t.Fatalf("status %d, want %d", got, tt.status)
				}
				return
			}
			doc, status := ts.getPage(t, tt.path)
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			for _, id := range tt.want {
				if doc.Find(testid(id)).Length() == 0 {
					t.Errorf("no element with data-testid=%q", id)
				}
			}
			checkCSPSafe(t, doc)
			if tt.check != nil {
				tt.check(t, doc)
			}
		})
	}
}

// checkCSPSafe fails when a page needs what the Content-Security-Policy
// refuses: inline scripts, inline style attributes or <style> elements.
// It also fetches every module and stylesheet the page names.
func checkCSPSafe(t *testing.T, doc *goquery.Document) {
	t.Helper()
	doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		src, hasSrc := s.Attr("src")
		typ, _ := s.Attr("type")
		switch {
		case typ == "application/json":
		case !hasSrc:
			t.Errorf("inline script: %.80s", s.Text())
		case !strings.HasPrefix(src, "/static/js/") || !strings.Contains(src, "?v="):
			t.Errorf("script src %q is not a versioned static module", src)
		}
	})
	if n := doc.Find("[style]").Length(); n > 0 {
		t.Errorf("%d elements with a style attribute (CSP style-src 'self' refuses them)", n)
	}
	if n := doc.Find("style").Length(); n > 0 {
		t.Errorf("%d <style> elements", n)
	}
	doc.Find("[onclick],[onload],[onchange]").Each(func(_ int, s *goquery.Selection) {
		t.Errorf("inline event handler on <%s>", goquery.NodeName(s))
	})
}

func TestPageAssets(t *testing.T) {
	ts := mustOpenServer(t, Config{})
	doc, _ := ts.getPage(t, "/images/demo/run?path=/seed/bench64.bin")
	var urls []string
	doc.Find("script[src]").Each(func(_ int, s *goquery.Selection) { urls = append(urls, s.AttrOr("src", "")) })
	doc.Find("link[rel=stylesheet]").Each(func(_ int, s *goquery.Selection) { urls = append(urls, s.AttrOr("href", "")) })
	if len(urls) != 2 {
		t.Fatalf("assets %v, want the run module and the stylesheet", urls)
	}
	for _, u := range urls {
		res, err := http.Get(ts.ts.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("GET %s: %d", u, res.StatusCode)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("GET %s: Cache-Control %q, want a long immutable cache for a versioned URL", u, cc)
		}
		if strings.HasSuffix(strings.SplitN(u, "?", 2)[0], ".js") && !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
			t.Errorf("GET %s: Content-Type %q", u, res.Header.Get("Content-Type"))
		}
	}
}
