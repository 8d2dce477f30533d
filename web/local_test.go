package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/testutil"
	"github.com/zrviz/zrviz/templates"
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

// TestImagesPageStatic renders the images page as the static site does (Static) and as the server
// does: "open an image from this computer" replaces the upload form, and a local image's row says
// where it came from.
func TestImagesPageStatic(t *testing.T) {
	s, err := NewServer(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../imgio/testdata/basic.img.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddImage("local-00112233445566ff", "basic.img", img); err != nil {
		t.Fatal(err)
	}
	if name, ok := s.LocalImage("local-00112233445566ff"); !ok || name != "basic.img" {
		t.Errorf("LocalImage = %q, %v", name, ok)
	}
	if _, ok := s.LocalImage("local-ffffffffffffffff"); ok {
		t.Error("LocalImage found an image never added")
	}
	for _, static := range []bool{false, true} {
		var b strings.Builder
		p := templates.ImagesPage{Layout: s.layout("Images", "js/images.js")}
		p.Static = static
		for _, si := range s.images() {
			p.Images = append(p.Images, templates.ImageItem{ID: si.ID, Name: si.Name, Local: isLocalID(si.ID)})
		}
		if err := templates.Images(p).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
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
		if row := doc.Find(testid("image-item")).Text(); !strings.Contains(row, "this computer") {
			t.Errorf("local image's row %q does not say it came from this computer", row)
		}
	}
}

// TestLocalGate routes image pages through localGate as the static site does: an unknown local id
// gets the page that asks for the file again, a loaded one and any other id reach the handler.
func TestLocalGate(t *testing.T) {
	s, err := NewServer(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	img, err := imgio.OpenFileContext(context.Background(), testutil.RawImage(t, "../imgio/testdata/basic.img.gz"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddImage("local-00112233445566ff", "basic.img", img); err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	r.Route("/images/{id}", func(r chi.Router) {
		r.Use(s.localGate)
		r.Get("/*", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("handler")) })
	})
	for path, missing := range map[string]bool{
		"/images/local-0123456789abcdef/":                true,
		"/images/local-0123456789abcdef/run?path=/a":     true,
		"/images/local-00112233445566ff/":                false, // loaded
		"/images/demo/":                                  false,
		"/images/local-notafingerprint/files/a":          false,
		"/images/local-0123456789abcdef/blocks/4096?x=1": true,
	} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		gotMissing := strings.Contains(w.Body.String(), `data-testid="local-missing"`)
		if gotMissing != missing || (missing && w.Code != http.StatusNotFound) || (!missing && w.Body.String() != "handler") {
			t.Errorf("%s: status %d, asks for the file %v; want %v", path, w.Code, gotMissing, missing)
		}
	}
}
