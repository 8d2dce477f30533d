package templates

import (
	"bytes"
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestRunURL(t *testing.T) {
	u, err := url.Parse(RunURL("demo", "/a b/c&d.bin", 4096, 8192, "batched", 12))
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/images/demo/run" {
		t.Errorf("path %q", u.Path)
	}
	q := u.Query()
	for k, want := range map[string]string{"path": "/a b/c&d.bin", "offset": "4096", "length": "8192", "mode": "batched", "step": "12"} {
		if got := q.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if strings.Contains(RunURL("demo", "/x", 0, 1, "both", -1), "step=") {
		t.Error("a negative step is not left out")
	}
}

// TestRunPageEscapes renders the player with a hostile path: it must come
// out as attribute text, not markup.
func TestRunPageEscapes(t *testing.T) {
	var b bytes.Buffer
	p := RunPage{ID: "demo", Path: `/"><script>alert(1)</script>`, Mode: "both", Length: 1}
	if err := Run(p).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>alert") {
		t.Fatalf("the path was not escaped:\n%s", b.String())
	}
}

// TestNameParts: a field name splits after its underscores, the parts join back to it, and a short
// prefix ("i_") stays with the word after it.
func TestNameParts(t *testing.T) {
	for name, want := range map[string][]string{
		"i_atime_nsec":            {"i_atime_", "nsec"},
		"i_mode":                  {"i_mode"},
		"magic":                   {"magic"},
		"sit_ver_bitmap_bytesize": {"sit_", "ver_", "bitmap_", "bytesize"},
		"cp_pack_start_sum":       {"cp_pack_", "start_", "sum"},
		"x_":                      {"x_"},
		"":                        {""},
	} {
		got := nameParts(name)
		if strings.Join(got, "") != name || !slices.Equal(got, want) {
			t.Errorf("nameParts(%q) = %q, want %q", name, got, want)
		}
	}
}
