package static

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestAssets(t *testing.T) {
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(a.Version()) {
		t.Fatalf("version %q is not 12 hex digits", a.Version())
	}
	if got, want := a.Hashed("js/run.js"), "/static/js/run.js?v="+a.Version(); got != want {
		t.Errorf("Hashed = %q, want %q", got, want)
	}
	b, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if a.Version() != b.Version() {
		t.Error("the version is not deterministic")
	}
}

// TestImports checks that every relative import names an embedded module
// and is served versioned, so one hashed entry point pins the whole graph.
func TestImports(t *testing.T) {
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(files, "js/*.js")
	if err != nil || len(names) == 0 {
		t.Fatalf("no modules: %v", err)
	}
	imp := regexp.MustCompile(`from\s+['"](\./[^'"]+)['"]`)
	for _, n := range names {
		src, err := fs.ReadFile(files, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range imp.FindAllStringSubmatch(string(src), -1) {
			target := "js/" + strings.TrimPrefix(m[1], "./")
			if _, err := fs.Stat(files, target); err != nil {
				t.Errorf("%s imports %s, which is not embedded", n, m[1])
			}
		}
		served := get(t, a, "/"+n+"?v="+a.Version())
		for _, m := range imp.FindAllStringSubmatch(served, -1) {
			if !strings.HasSuffix(m[1], "?v="+a.Version()) {
				t.Errorf("%s is served importing %q, want the versioned URL", n, m[1])
			}
		}
	}
}

func get(t *testing.T, a *Assets, target string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return string(b)
}

func TestServe(t *testing.T) {
	a, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target, status, ctype, cache string
	}{
		{"/js/run.js?v=" + a.Version(), "200", "text/javascript", "immutable"},
		{"/js/run.js", "200", "text/javascript", "no-cache"},
		{"/js/run.js?v=000000000000", "200", "text/javascript", "no-cache"},
		{"/css/app.css?v=" + a.Version(), "200", "text/css", "immutable"},
		{"/js/nope.js", "404", "", ""},
		{"/../static.go", "404", "", ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
		res := rec.Result()
		if got := res.Status[:3]; got != tt.status {
			t.Errorf("%s: status %s, want %s", tt.target, got, tt.status)
			continue
		}
		if tt.status != "200" {
			continue
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
			t.Errorf("%s: Content-Type %q, want %s", tt.target, ct, tt.ctype)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, tt.cache) {
			t.Errorf("%s: Cache-Control %q, want %s", tt.target, cc, tt.cache)
		}
	}
}
