package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// siteRun runs `zrviz site --wasm W DIR` (a stand-in WebAssembly: nothing is built).
func siteRun(t *testing.T, dir string) error {
	t.Helper()
	w := filepath.Join(t.TempDir(), "fake.wasm")
	if err := os.WriteFile(w, []byte("\x00asm"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runMain(t, "site", "--wasm", w, dir)
	return err
}

// TestSiteWritesOnlyItsOwnDirectory (issue 37, findings 6 and 7): `zrviz site DIR` writes into a
// new or empty directory, or one it wrote before (its marker file), never through a symbolic link
// in it, and refuses a directory holding a source tree or other files, saying what to do. It wrote
// through an index.html linked to a file outside DIR, put css/js into the target of a `static`
// link, and in a clone (`zrviz site .`) rewrote 38 tracked static/js files.
func TestSiteWritesOnlyItsOwnDirectory(t *testing.T) {
	// A fresh directory, then the same again: written, marked, rewritable.
	fresh := filepath.Join(t.TempDir(), "site")
	for range 2 {
		if err := siteRun(t, fresh); err != nil {
			t.Fatalf("a fresh directory: %v", err)
		}
	}
	for _, n := range []string{siteMarker, "index.html", "404.html", "zrviz.wasm", "static/js/ws.js"} {
		if fi, err := os.Lstat(filepath.Join(fresh, n)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("a fresh directory: %s: %v", n, err)
		}
	}
	// An empty existing directory is fine too.
	if err := siteRun(t, t.TempDir()); err != nil {
		t.Errorf("an empty directory: %v", err)
	}

	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.html")
	const keep = "not zrviz's"
	cases := []struct {
		name  string
		setup func(dir string) // dir exists, empty
		want  string           // a word of the refusal
	}{
		{"index.html linked outside, in a site zrviz made", func(dir string) {
			mustSite(t, dir)
			os.Remove(filepath.Join(dir, "index.html"))
			must(t, os.Symlink(victim, filepath.Join(dir, "index.html")))
		}, "symbolic link"},
		{"static linked outside, in a site zrviz made", func(dir string) {
			mustSite(t, dir)
			os.RemoveAll(filepath.Join(dir, "static"))
			must(t, os.Symlink(outside, filepath.Join(dir, "static")))
		}, "symbolic link"},
		{"index.html linked outside, unmarked", func(dir string) {
			must(t, os.Symlink(victim, filepath.Join(dir, "index.html")))
		}, "did not write"},
		{"a clone: go.mod and static/js", func(dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644))
			must(t, os.MkdirAll(filepath.Join(dir, "static", "js"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "static", "js", "ws.js"), []byte(keep), 0o644))
		}, "source tree"},
		{"a clone marked by mistake", func(dir string) {
			must(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, siteMarker), nil, 0o644))
		}, "source tree"},
		{"other files", func(dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(keep), 0o644))
		}, "notes.txt"},
	}
	for _, c := range cases {
		must(t, os.WriteFile(victim, []byte(keep), 0o644))
		dir := t.TempDir()
		c.setup(dir)
		before := snapshot(t, outside)
		err := siteRun(t, dir)
		var ie inputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.want)
		}
		if after := snapshot(t, outside); after != before {
			t.Errorf("%s: the directory outside DIR changed:\n%s\nwas\n%s", c.name, after, before)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "static", "js", "ws.js")); err == nil && c.want == "source tree" && string(b) != keep {
			t.Errorf("%s: the clone's static/js/ws.js was rewritten", c.name)
		}
	}
	// A link as DIR itself.
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(outside, link))
	if err := siteRun(t, link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("DIR a symbolic link: %v, want a refusal", err)
	}
}

func mustSite(t *testing.T, dir string) {
	t.Helper()
	if err := siteRun(t, dir); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot lists dir's files with their contents.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		c, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b.WriteString(p + ": " + string(c) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
