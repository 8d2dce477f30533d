package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
)

func TestIsLocalID(t *testing.T) {
	for id, want := range map[string]bool{
		"local-0123456789abcdef":  true,
		"local-0123456789ABCDEF":  false, // Fingerprint is lower-case hex
		"local-0123456789abcde":   false,
		"local-0123456789abcdefa": false,
		"local-0123456789abcdeg":  false,
		"demo":                    false,
		"up-0123456789abcdef":     false,
	} {
		if got := isLocalID(id); got != want {
			t.Errorf("isLocalID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestLocalMissing renders the page of a permalink to a local image the worker does not hold: a 404
// naming the fingerprint, the sentence that the image stays on this machine, the file input and the
// live region the script reports to, loaded with the script that reopens the file.
func TestLocalMissing(t *testing.T) {
	s, err := NewServer(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const id = "local-0123456789abcdef"
	w := httptest.NewRecorder()
	s.localMissing(w, httptest.NewRequest(http.MethodGet, "/images/"+id+"/run?path=/a&step=3", nil), id)
	if w.Code != http.StatusNotFound {
		t.Errorf("status %d, want 404", w.Code)
	}
	doc, err := goquery.NewDocumentFromReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	page := doc.Find(testid("local-missing"))
	if page.Length() != 1 || page.AttrOr("data-id", "") != id {
		t.Fatalf("local-missing section: %d, data-id %q", page.Length(), page.AttrOr("data-id", ""))
	}
	if fp := doc.Find(testid("local-fingerprint")).Text(); fp != "0123456789abcdef" {
		t.Errorf("fingerprint shown %q", fp)
	}
	if txt := doc.Find(testid("local-missing-text")).Text(); !strings.Contains(txt, "names a local image") {
		t.Errorf("text %q does not say the permalink names a local image", txt)
	}
	if txt := doc.Find(testid("local-privacy")).Text(); !strings.Contains(txt, "stays on this machine") || !strings.Contains(txt, "never uploaded") {
		t.Errorf("privacy sentence %q", txt)
	}
	if in := doc.Find(testid("local-input")); in.AttrOr("type", "") != "file" {
		t.Error("no file input")
	}
	if live := doc.Find(testid("local-message")); live.AttrOr("aria-live", "") != "polite" {
		t.Error("no aria-live region")
	}
	if src, _ := doc.Find(`script[type="module"]`).Attr("src"); !strings.Contains(src, "js/localimage") {
		t.Errorf("page script %q, want js/localimage.js", src)
	}
}

// serverWithLocal returns a server (static or not) holding basic.img as a local image, local-00112233445566ff.
func serverWithLocal(t *testing.T, static bool) *Server {
	t.Helper()
	cfg := Config{Static: static}
	if !static {
		cfg.DataDir = t.TempDir()
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../imgio/testdata/basic.img.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddImage("local-00112233445566ff", "basic.img", img); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestImagesPageStatic gets the images page from the static site's server and from the server:
// "open an image from this computer" replaces the upload form in the site, and a local image's row
// says where it came from.
func TestImagesPageStatic(t *testing.T) {
	for _, static := range []bool{false, true} {
		s := serverWithLocal(t, static)
		if name, ok := s.LocalImage("local-00112233445566ff"); !ok || name != "basic.img" {
			t.Errorf("LocalImage = %q, %v", name, ok)
		}
		if _, ok := s.LocalImage("local-ffffffffffffffff"); ok {
			t.Error("LocalImage found an image never added")
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://localhost/", nil))
		doc, err := goquery.NewDocumentFromReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		up, local := doc.Find(testid("upload")).Length(), doc.Find(testid("local-open")).Length()
		if static && (up != 0 || local != 1 || doc.Find(testid("local-input")).Length() != 1) {
			t.Errorf("static: %d upload forms, %d local sections", up, local)
		}
		if !static && (up != 1 || local != 0) {
			t.Errorf("server: %d upload forms, %d local sections", up, local)
		}
		if row := doc.Find(testid("image-item") + `[data-id="local-00112233445566ff"]`).Text(); !strings.Contains(row, "this computer") {
			t.Errorf("local image's row %q does not say it came from this computer", row)
		}
	}
}

// TestLocalGate gets image pages from the static site's server: an unknown local id gets the page
// that asks for the file again (404), a loaded one and any other id reach their handlers.
func TestLocalGate(t *testing.T) {
	h := serverWithLocal(t, true).Handler()
	for path, missing := range map[string]bool{
		"/images/local-0123456789abcdef/":                true,
		"/images/local-0123456789abcdef/run?path=/a":     true,
		"/images/local-00112233445566ff/":                false, // loaded
		"/images/demo/":                                  false, // not loaded here: the ordinary 404
		"/images/local-notafingerprint/":                 false,
		"/images/local-0123456789abcdef/blocks/4096?x=1": true,
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil))
		gotMissing := strings.Contains(w.Body.String(), `data-testid="local-missing"`)
		if gotMissing != missing || (missing && w.Code != http.StatusNotFound) {
			t.Errorf("%s: status %d, asks for the file %v; want %v", path, w.Code, gotMissing, missing)
		}
	}
}

// TestFollowPageStatic: a room's follow link opened on the static site is a page that says rooms
// need zrviz serve (issue 38), not the API's JSON.
func TestFollowPageStatic(t *testing.T) {
	s := serverWithLocal(t, true)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://localhost/follow/abcdefgh", nil))
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("the follow page on the site is %s: %.200s", ct, w.Body.String())
	}
	doc, err := goquery.NewDocumentFromReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	if body := doc.Find("main").Text(); !strings.Contains(body, "zrviz serve") || !strings.Contains(body, "rooms") {
		t.Errorf("the follow page on the site reads %q", body)
	}
	if w.Code != http.StatusNotImplemented {
		t.Errorf("status %d, want 501", w.Code)
	}
}

// TestImagePageWhoWroteIt: the image page says what its superblock records and what it does not
// (issue 38): where mkfs.f2fs ran (init_version), and the kernel that wrote the files — Linux
// 6.12.117 for the demo, whose provenance is known; "not recorded" for any other image, since no
// field names it. It never calls the mkfs host's kernel the one that wrote the files.
func TestImagePageWhoWroteIt(t *testing.T) {
	local := serverWithLocal(t, false)
	ts := mustOpenServer(t, Config{}) // holds the demo
	rows := func(s *Server, id string) map[string]string {
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://localhost/images/"+id, nil))
		doc, err := goquery.NewDocumentFromReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		doc.Find(testid("volume-summary") + " tr").Each(func(_ int, tr *goquery.Selection) {
			out[tr.Find("th").Text()] = tr.Find("td").Text() + " | " + tr.AttrOr("title", "")
		})
		return out
	}
	demo := rows(ts.Server, DemoID)
	if got := demo["mkfs.f2fs ran on"]; !strings.HasPrefix(got, "Linux version 6.18.44") || !strings.Contains(got, "init_version") {
		t.Errorf("demo: mkfs.f2fs ran on %q", got)
	}
	if got := demo["files written by"]; !strings.HasPrefix(got, "Linux 6.12.117") {
		t.Errorf("demo: files written by %q", got)
	}
	if _, ok := demo["formatted on"]; ok {
		t.Error("the demo's page still says \"formatted on\"")
	}
	if got := rows(local, "local-00112233445566ff")["files written by"]; !strings.HasPrefix(got, "not recorded in the image") {
		t.Errorf("another image: files written by %q", got)
	}
}
