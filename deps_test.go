// Package zrviz_test holds checks over the whole module.
package zrviz_test

import (
	"os"
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
	// One go list for every package (its .Deps are all it imports, directly or not): one call a
	// package cost 0.8 CPU-s.
	args := []string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}
	for _, tt := range tests {
		args = append(args, tt.pkg)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	depsOf := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		depsOf[f[0]] = f[1:]
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			deps, ok := depsOf["github.com/zrviz/zrviz/"+strings.TrimPrefix(tt.pkg, "./")]
			if !ok {
				t.Fatalf("go list did not list %s", tt.pkg)
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

// TestArchitecturePicture holds docs/architecture.md's dependency picture to the code: its first
// fenced block lists every package of the product with the module's packages it imports directly,
// higher layers first. A package missing from the picture or listed but gone, an import the picture
// lacks or names wrongly, and an import of a package listed above the importer (an arrow pointing
// up) fail it.
func TestArchitecturePicture(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	picture := firstFence(t, string(doc))
	const module = "github.com/zrviz/zrviz/"
	drawn := map[string][]string{}
	var order []string
	for _, line := range strings.Split(picture, "\n") {
		pkg, imports, ok := strings.Cut(line, "──►")
		if !ok {
			if strings.TrimSpace(line) != "" {
				t.Errorf("picture line %q has no ──►", line)
			}
			continue
		}
		pkg = strings.TrimSpace(pkg)
		order = append(order, pkg)
		drawn[pkg] = nil
		if s := strings.TrimSpace(imports); s != "(nothing of zrviz)" {
			for _, imp := range strings.Split(s, ",") {
				drawn[pkg] = append(drawn[pkg], strings.TrimSpace(imp))
			}
		}
	}
	// The real imports: every package but the test-only ones, the WebAssembly command under GOOS=js.
	real := map[string][]string{}
	list := func(env []string, pkgs ...string) {
		cmd := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}"}, pkgs...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, imports, _ := strings.Cut(line, ":")
			pkg = strings.TrimPrefix(pkg, module)
			if !strings.HasPrefix(pkg, "github.com/") && !strings.HasPrefix(pkg, "internal/testutil") && !strings.HasPrefix(pkg, "internal/imgedit") && pkg != "reliability" {
				real[pkg] = nil
				for _, imp := range strings.Fields(imports) {
					if strings.HasPrefix(imp, module) {
						real[pkg] = append(real[pkg], strings.TrimPrefix(imp, module))
					}
				}
			}
		}
	}
	list(nil, "./...")
	list([]string{"GOOS=js", "GOARCH=wasm"}, "./cmd/zrviz-wasm")
	delete(real, "github.com/zrviz/zrviz") // the module root holds only these checks
	for pkg, imports := range real {
		want, ok := drawn[pkg]
		if !ok {
			t.Errorf("%s is not in the picture (it imports %v)", pkg, imports)
			continue
		}
		slices.Sort(imports)
		got := slices.Sorted(slices.Values(want))
		if !slices.Equal(got, imports) {
			t.Errorf("%s: the picture says it imports %v, the code %v", pkg, got, imports)
		}
	}
	for _, pkg := range order {
		if _, ok := real[pkg]; !ok {
			t.Errorf("the picture lists %s, which is not a package of the product", pkg)
		}
	}
	// Downwards: every import is listed below its importer.
	for i, pkg := range order {
		for _, imp := range drawn[pkg] {
			if j := slices.Index(order, imp); j >= 0 && j <= i {
				t.Errorf("%s imports %s, which the picture lists above it: an arrow pointing up", pkg, imp)
			}
		}
	}
}

// firstFence returns the text inside a markdown document's first ``` fence.
func firstFence(t *testing.T, doc string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "```\n")
	if !ok {
		t.Fatal("no fenced block")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("an unclosed fenced block")
	}
	return block
}
