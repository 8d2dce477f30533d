package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/templates"
)

// localStubSW stands in for the static site's service worker (static/site/sw.js) as far as opening
// a local image goes: it answers {type: 'zrviz-open', file} on the port sent with it, as the
// contract with zrviz.openLocal says — the same image for a file named same.img, another for any
// other name, and the reader's refusal for bad.img. It serves no page: the Go server does.
const localStubSW = `
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('message', (e) => {
  const m = e.data || {};
  if (m.type !== 'zrviz-open' || !(m.file instanceof Blob)) return;
  const port = e.ports[0];
  if (m.file.name === 'bad.img') {
    port.postMessage({ok: false, error: 'bad.img: imgio: android-sparse chunk header at 0x28: unknown chunk type (0xcac9)'});
  } else if (m.file.name === 'same.img') {
    port.postMessage({ok: true, id: 'local-0123456789abcdef', name: m.file.name});
  } else {
    port.postMessage({ok: true, id: 'local-ffffffffffffffff', name: m.file.name});
  }
});
`

// TestBrowserLocalOpen drives "open an image from this computer" in Chromium, on the images page
// as the static site renders it (contract transport "worker") and on the page of a permalink to a
// local image the worker does not hold, with a stand-in service worker: a picked file is handed to
// the worker and its answer shown in the live region (the image's link, or the reader's reason); the
// permalink's page reloads on the same file and names a different one. axe-core finds nothing
// serious on either page.
func TestBrowserLocalOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	src := axeSource(t)
	s, err := NewServer(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mux := http.NewServeMux()
	mux.Handle("/", s.Handler())
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		p := templates.ImagesPage{Layout: s.layout("Images", "js/images.js", templates.Crumb{Label: "images"})}
		p.Static, p.Contract = true, workerContract(t)
		s.render(w, r, http.StatusOK, templates.Images(p))
	})
	mux.HandleFunc("GET /sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write([]byte(localStubSW))
	})
	mux.HandleFunc("GET /images/local-0123456789abcdef/", func(w http.ResponseWriter, r *http.Request) {
		s.localMissing(w, r, "local-0123456789abcdef")
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()

	dir := t.TempDir()
	files := map[string]string{}
	for _, n := range []string{"same.img", "other.img", "bad.img"} {
		files[n] = filepath.Join(dir, n)
		if err := os.WriteFile(files[n], []byte("an image's bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := browser(t)(t)
	msg := func() string { return text(t, ctx, "local-message") }
	pick := func(name string) {
		t.Helper()
		do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(testid("local-input")), []string{files[name]}))
	}

	do(t, ctx, chromedp.Navigate(ts.URL+"/"))
	waitJS(t, ctx, `document.readyState === 'complete'`, 30*time.Second)
	if _, err := evalJS[bool](ctx, `navigator.serviceWorker.register('/sw.js').then(() => true)`, chromedp.EvalAwaitPromise); err != nil {
		t.Fatalf("register the stand-in worker: %v", err)
	}
	waitJS(t, ctx, `navigator.serviceWorker.controller !== null`, 30*time.Second)
	if n := js[int](t, ctx, `document.querySelectorAll('[data-testid="upload"]').length`); n != 0 {
		t.Errorf("the static images page shows %d upload forms", n)
	}
	if got := text(t, ctx, "local-privacy"); !strings.Contains(got, "stays on this machine") {
		t.Errorf("privacy sentence %q", got)
	}
	axeCheck(t, ctx, src, "images page, static")

	// The stand-in opens nothing: the image the real worker would have added is added here, so
	// that the page's /api/images describes its row.
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../imgio/testdata/basic.img.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddImage("local-ffffffffffffffff", "other.img", img); err != nil {
		t.Fatal(err)
	}
	pick("other.img")
	waitJS(t, ctx, `document.querySelector('[data-testid="local-link"]') !== null`, 30*time.Second)
	if got := msg(); got != "Opened other.img as local-ffffffffffffffff" {
		t.Errorf("after opening: %q", got)
	}
	if href := js[string](t, ctx, `document.querySelector('[data-testid="local-link"]').getAttribute('href')`); href != "/images/local-ffffffffffffffff" {
		t.Errorf("link %q", href)
	}
	waitJS(t, ctx, `[...document.querySelectorAll('[data-testid="image-item"]')].some((tr) => tr.dataset.id === 'local-ffffffffffffffff' && tr.textContent.includes('this computer') && tr.textContent.includes('raw') && tr.textContent.includes('MiB'))`, 30*time.Second)
	shot(t, ctx, "static-local-open")

	pick("bad.img")
	waitJS(t, ctx, `document.getElementById('local-msg').classList.contains('error')`, 30*time.Second)
	if got := msg(); got != "Could not open bad.img: bad.img: imgio: android-sparse chunk header at 0x28: unknown chunk type (0xcac9)" {
		t.Errorf("after a refusal: %q", got)
	}
	axeCheck(t, ctx, src, "images page, static, after a refusal")

	// The permalink of a local image the worker does not hold.
	do(t, ctx, chromedp.Navigate(ts.URL+"/images/local-0123456789abcdef/run?path=/a&step=3"))
	waitJS(t, ctx, `document.readyState === 'complete' && navigator.serviceWorker.controller !== null`, 30*time.Second)
	if got := text(t, ctx, "local-fingerprint"); got != "0123456789abcdef" {
		t.Errorf("fingerprint %q", got)
	}
	axeCheck(t, ctx, src, "local image permalink")
	js[bool](t, ctx, `(window.zrvizMark = true)`)
	pick("other.img")
	waitJS(t, ctx, `document.getElementById('local-msg').classList.contains('error')`, 30*time.Second)
	if got := msg(); !strings.Contains(got, "different file (fingerprint ffffffffffffffff)") || !strings.Contains(got, "fingerprint 0123456789abcdef") {
		t.Errorf("a different file: %q", got)
	}
	shot(t, ctx, "static-local-missing")
	pick("same.img")
	waitJS(t, ctx, `window.zrvizMark === undefined && document.readyState === 'complete'`, 30*time.Second)
	if got := js[string](t, ctx, `location.pathname + location.search`); got != "/images/local-0123456789abcdef/run?path=/a&step=3" {
		t.Errorf("reloaded %q, want the same permalink", got)
	}
}

// workerContract is the page contract with transport "worker", as the static site's pages carry it.
func workerContract(t *testing.T) map[string]any {
	t.Helper()
	b, err := json.Marshal(newPageContract())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["transport"] = "worker"
	return m
}
