package templates

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
)

func TestBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1 KiB"},
		{1536, "1.5 KiB"},
		{8 << 30, "8 GiB"},
		{67108864, "64 MiB"},
		{9664729088, "9 GiB"},
		{786432, "768 KiB"},
	}
	for _, tt := range tests {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"}, {19, "19"}, {999, "999"}, {1000, "1,000"}, {16384, "16,384"},
		{-1234567, "-1,234,567"}, {2359553, "2,359,553"},
	}
	for _, tt := range tests {
		if got := Int(tt.n); got != tt.want {
			t.Errorf("Int(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	if got := Int(uint32(4294967295)); got != "4,294,967,295" {
		t.Errorf("Int(max uint32) = %q", got)
	}
}

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
