package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zrviz/zrviz/internal/testutil"
)

// The static site (zrviz site DIR, issue 31): the server's handlers built as WebAssembly and run in
// the page's service worker. These tests build the site once with the real command, serve DIR with a
// plain file server that records every request, and drive it in headless Chromium.

var (
	siteOnce sync.Once
	siteDir  string
	siteErr  error
)

// builtSite runs `zrviz site` once for the test binary and returns DIR.
func builtSite(t testing.TB) string {
	t.Helper()
	testutil.NeedTool(t, "go")
	siteOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zrviz-site-")
		if err != nil {
			siteErr = err
			return
		}
		siteDir = filepath.Join(dir, "site")
		cmd := exec.Command("go", "run", "./cmd/zrviz", "site", siteDir)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			siteErr = err
			siteDir = string(out)
		}
	})
	if siteErr != nil {
		t.Fatalf("zrviz site: %v\n%s", siteErr, siteDir)
	}
	return siteDir
}

// fileRequest is one request the static file server got.
type fileRequest struct {
	method, path string
	inDir        bool // the path names a file in DIR
	upgrade      bool // a websocket upgrade was asked for
}

// staticHost serves dir as a plain static file server does (no websocket, no API, nothing but
// files) and records every request.
type staticHost struct {
	dir string
	mu  sync.Mutex
	got []fileRequest
}

func serveSite(t testing.TB, dir string) (*staticHost, string) {
	h := &staticHost{dir: dir}
	files := http.FileServer(http.Dir(dir))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
		fi, err := os.Stat(name)
		h.mu.Lock()
		h.got = append(h.got, fileRequest{method: r.Method, path: r.URL.Path, inDir: err == nil && (!fi.IsDir() ||
			fileExists(filepath.Join(name, "index.html"))), upgrade: r.Header.Get("Upgrade") != ""})
		h.mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	// Service workers need a secure context: http://localhost is one, http://127.0.0.1 too.
	u, _ := url.Parse(ts.URL)
	return h, "http://localhost:" + u.Port()
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// requests returns what the host got so far.
func (h *staticHost) requests() []fileRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]fileRequest(nil), h.got...)
}

// checkOnlyFiles fails for any request that was not a GET of a file in DIR.
func (h *staticHost) checkOnlyFiles(t testing.TB) {
	t.Helper()
	got := h.requests()
	if len(got) == 0 {
		t.Fatal("the static host got no request at all")
	}
	for _, r := range got {
		if r.method != http.MethodGet || !r.inDir || r.upgrade || strings.HasPrefix(r.path, "/api/") || strings.HasPrefix(r.path, "/ws/") {
			t.Errorf("the static host got %s %s (a file of DIR: %v, upgrade: %v): the site asked a server for something",
				r.method, r.path, r.inDir, r.upgrade)
		}
	}
}

// siteTab opens the site's front page in a new tab and waits for the worker's images page.
func siteTab(t *testing.T, tab func(testing.TB) context.Context, base string) context.Context {
	t.Helper()
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/"))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="image-list"]')`, 90*time.Second)
	return ctx
}

// TestSitePlaysBench64 is issue 31's first "done when": the built site, on a plain file server,
// plays /seed/bench64.bin in both modes to the end with the server's numbers (16,384 per-block
// calls, 19 batched), and every request the host got was a GET of a file in DIR.
func TestSitePlaysBench64(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site and drives a browser")
	}
	dir := builtSite(t)
	host, base := serveSite(t, dir)
	tab := browser(t)
	ctx := siteTab(t, tab, base)
	if got := text(t, ctx, "image-list"); !strings.Contains(got, "demo") {
		t.Fatalf("the site's images list does not show the demo: %q", got)
	}
	do(t, ctx, chromedp.Navigate(runURL(base, "/seed/bench64.bin", url.Values{"mode": {"both"}})))
	waitStatus(t, ctx, time.Minute, "paused")
	playFull(t, ctx)
	waitStatus(t, ctx, 3*time.Minute, "done")
	playedToEnd(t, ctx)
	for id, want := range map[string]string{"stat-calls-per-block": "16384", "stat-calls-batched": "19"} {
		if got := count(t, ctx, id); got != want {
			t.Errorf("%s = %q after the play, want %s", id, got, want)
		}
	}
	screenshot(t, ctx, "site-bench64")
	host.checkOnlyFiles(t)
}

// sitePages are the sweep's pages the static site serves: every one but the room follower's (the
// site has no rooms) and the diff against a second stored image (the site's images are the demo and
// the ones the user opens; TestSiteLocalImage opens one).
func sitePages() []classroomPage {
	var out []classroomPage
	for _, p := range classroomPages {
		if p.name == "follow" || p.name == "diff" {
			continue
		}
		out = append(out, p)
	}
	return out
}

// TestSitePages loads every page of the sweep from the built site at a phone's, a laptop's and a
// projector's size: each gets ready as it does from the server, with no uncaught exception, no
// sideways scroll and no axe-core violation; the run page says that rooms need the server, and
// the API the site has no use for answers server_only.
func TestSitePages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the site and drives a browser")
	}
	src := axeSource(t)
	dir := builtSite(t)
	host, base := serveSite(t, dir)
	tab := browser(t)
	siteTab(t, tab, base) // installs the worker
	for _, vp := range []struct{ w, h int64 }{{390, 844}, {1280, 720}, {1920, 1080}} {
		t.Run(fmt.Sprintf("%dx%d", vp.w, vp.h), func(t *testing.T) {
			for _, p := range sitePages() {
				ctx := tab(t)
				do(t, ctx, chromedp.EmulateViewport(vp.w, vp.h))
				where := fmt.Sprintf("site %s at %d×%d", p.name, vp.w, vp.h)
				do(t, ctx, chromedp.Navigate(base+p.path))
				waitJSOr(t, ctx, p.ready, time.Minute, `document.title + ' ' + document.body.innerText.slice(0, 200)`)
				settle(t, ctx)
				noSideways(t, ctx, where)
				headingOne(t, ctx, where)
				axeCheck(t, ctx, src, where)
				if p.name == "run" {
					if got := text(t, ctx, "room-static"); !strings.Contains(got, "zrviz serve") {
						t.Errorf("%s: the room note reads %q", where, got)
					}
					shot(t, ctx, fmt.Sprintf("site-run-%dx%d", vp.w, vp.h))
				}
			}
		})
	}
	ctx := tab(t)
	do(t, ctx, chromedp.Navigate(base+"/glossary"))
	waitJS(t, ctx, `!!document.querySelector('[data-testid="term-sit-lock"]')`, time.Minute)
	got, err := evalJS[[]any](ctx, `(async () => { const r = await fetch('/api/images', {method: 'POST', body: 'x'}); return [r.status, (await r.json()).code]; })()`, chromedp.EvalAwaitPromise)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != float64(http.StatusNotImplemented) || got[1] != string(ESERVERONLY) {
		t.Errorf("POST /api/images in the site answers %v, want 501 %s", got, ESERVERONLY)
	}
	host.checkOnlyFiles(t)
}
