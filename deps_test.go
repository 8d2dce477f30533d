// Package zrviz_test holds checks over the whole module.
package zrviz_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependenciesPointOneWay keeps the layering of docs/architecture.md: the reader and the engine know
// nothing of HTTP, templates or websockets, and the engine does not know the reader.
func TestDependenciesPointOneWay(t *testing.T) {
	transport := []string{"net/http", "github.com/go-chi/chi", "github.com/a-h/templ", "github.com/coder/websocket"}
	tests := []struct {
		pkg string
		bad []string
	}{
		{"./core", append([]string{"github.com/zrviz/zrviz/imgio", "github.com/zrviz/zrviz/source"}, transport...)},
		{"./imgio", append([]string{"github.com/zrviz/zrviz/core", "github.com/zrviz/zrviz/source"}, transport...)},
		{"./source", transport},
		{"./player", append([]string{"github.com/zrviz/zrviz/imgio", "github.com/zrviz/zrviz/source", "github.com/zrviz/zrviz/web"}, transport...)},
		{"./request", append([]string{"github.com/zrviz/zrviz/imgio", "github.com/zrviz/zrviz/source", "github.com/zrviz/zrviz/web"}, transport...)},
		{"./glossary", append([]string{"github.com/zrviz/zrviz/core", "github.com/zrviz/zrviz/imgio", "github.com/zrviz/zrviz/web"}, transport...)},
		{"./internal/units", append([]string{"github.com/zrviz/zrviz/core", "github.com/zrviz/zrviz/imgio"}, transport...)},
		{"./ktrace", append([]string{"github.com/zrviz/zrviz/imgio", "github.com/zrviz/zrviz/source", "github.com/zrviz/zrviz/web"}, transport...)},
		{"./sandbox", append([]string{"github.com/zrviz/zrviz/imgio", "github.com/zrviz/zrviz/source", "github.com/zrviz/zrviz/web"}, transport...)},
		{"./gc", append([]string{"github.com/zrviz/zrviz/imgio", "github.com/zrviz/zrviz/source", "github.com/zrviz/zrviz/core", "github.com/zrviz/zrviz/web"}, transport...)},
		{"./exercise", append([]string{"github.com/zrviz/zrviz/web"}, transport...)},
		{"./imgdiff", append([]string{"github.com/zrviz/zrviz/core", "github.com/zrviz/zrviz/source", "github.com/zrviz/zrviz/web"}, transport...)},
		{"./afterck", append([]string{"github.com/zrviz/zrviz/web"}, transport...)},
		{"./survey", append([]string{"github.com/zrviz/zrviz/web"}, transport...)},
		{"./templates", []string{"github.com/zrviz/zrviz/imgio", "github.com/zrviz/zrviz/web", "github.com/coder/websocket"}},
		{"./web", []string{"github.com/zrviz/zrviz/cmd"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", tt.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps %s: %v\n%s", tt.pkg, err, out)
			}
			deps := strings.Fields(string(out))
			if len(deps) == 0 {
				t.Fatalf("go list -deps %s listed nothing", tt.pkg)
			}
			for _, d := range deps {
				for _, b := range tt.bad {
					if d == b || strings.HasPrefix(d, b+"/") {
						t.Errorf("%s depends on %s; see docs/architecture.md", tt.pkg, d)
					}
				}
			}
		})
	}
}

// TestF2FSIsALeaf: internal/f2fs holds the F2FS constants and formulas imgio, gc and core all use, which
// only works while it imports nothing of zrviz (gc imports nothing of zrviz but it, imgio neither core nor
// gc) and nothing outside the standard library.
func TestF2FSIsALeaf(t *testing.T) {
	const self = "github.com/zrviz/zrviz/internal/f2fs"
	out, err := exec.Command("go", "list", "-deps", "./internal/f2fs").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./internal/f2fs: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, self) {
		t.Fatalf("go list -deps ./internal/f2fs did not list %s: %q", self, deps)
	}
	for _, d := range deps {
		if d != self && (strings.HasPrefix(d, "github.com/zrviz/zrviz") || strings.Contains(strings.Split(d, "/")[0], ".")) {
			t.Errorf("internal/f2fs depends on %s; it must stay a leaf of the standard library", d)
		}
	}
}

// TestTestSupportStaysOutOfTheProduct: internal/testutil and internal/imgedit are for tests (they
// import "testing"; imgedit doctors images); the binary must not reach them, so no product code can
// start to depend on them. It is also why scripts/deadcode leaves them out: deadcode starts from main.
func TestTestSupportStaysOutOfTheProduct(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./cmd/zrviz").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/zrviz: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps ./cmd/zrviz listed %d packages", len(deps))
	}
	for _, d := range deps {
		switch d {
		case "testing", "github.com/zrviz/zrviz/internal/testutil", "github.com/zrviz/zrviz/internal/imgedit":
			t.Errorf("the zrviz binary depends on %s, which is for tests only", d)
		}
	}
}
