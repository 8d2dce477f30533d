package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/zrviz/zrviz/internal/units"
	"github.com/zrviz/zrviz/static"
)

const siteSynopsis = "site [flags] DIR"

// wasmPackage is the command the site's WebAssembly is built from.
const wasmPackage = "./cmd/zrviz-wasm"

// cmdSite writes the static site: zrviz without a server, for a static host or a machine an image
// must not leave. The WebAssembly is built from zrviz's source with the Go toolchain in PATH (the
// zrviz binary does not carry a second build of itself), so the command runs in a clone of zrviz.
func cmdSite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("site", siteSynopsis, stderr)
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(stderr, `
DIR receives a static site: index.html and 404.html (the first page, which installs the service
worker), sw.js (the service worker), zrviz.wasm (the zrviz server built as WebAssembly, with the demo
image), wasm_exec.js (Go's loader for it) and static/ (the pages' modules and CSS). Serve DIR with any
static file server over http://localhost or https:// (service workers need one of them), e.g.

  python3 -m http.server -d DIR 8000     then open http://localhost:8000/

It may be served at the host's root path (/) or under any folder (/~prof/zrviz/). Images opened
there stay in the browser.
`)
	}
	src := fs.String("src", ".", "zrviz's source tree (the module root) to build the WebAssembly from")
	wasm := fs.String("wasm", "", "use this already built `FILE` as zrviz.wasm instead of building one")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"site: want one argument, the directory to write (zrviz site DIR)"}
	}
	dir := fs.Arg(0)
	// DIR is a new or empty directory, or one zrviz site wrote before (its marker file); nothing in
	// it is written through a symbolic link (issue 37: `zrviz site DIR` overwrote an index.html
	// linked to a file outside DIR, and `zrviz site .` in a clone rewrote its static/js).
	out, err := openSiteDir(dir)
	if err != nil {
		return err
	}
	var wasmBytes []byte
	if *wasm != "" {
		if wasmBytes, err = os.ReadFile(*wasm); err != nil {
			return inputError{fmt.Errorf("site: --wasm: %w", err)}
		}
	} else if wasmBytes, err = buildWasm(ctx, *src, stderr); err != nil {
		return err
	}
	if err := out.write("zrviz.wasm", wasmBytes); err != nil {
		return err
	}
	goroot, err := goEnv(ctx, *src, "GOROOT")
	if err != nil {
		return err
	}
	// wasm_exec.js must be the one of the toolchain that built zrviz.wasm.
	execJS, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return fmt.Errorf("site: Go's wasm_exec.js: %w", err)
	}
	if err := out.write("wasm_exec.js", execJS); err != nil {
		return err
	}
	site := static.SiteFiles()
	err = fsWalkFiles(site, func(name string, b []byte) error {
		if err := out.write(name, b); err != nil {
			return err
		}
		if name == "index.html" {
			// Hosts that answer an unknown path with 404.html (GitHub Pages, Netlify) start a deep
			// link's first visit there.
			return out.write("404.html", b)
		}
		return nil
	})
	if err != nil {
		return err
	}
	assets, err := static.New()
	if err != nil {
		return err
	}
	if err := assets.Each(func(name string, b []byte) error { return out.write("static/"+name, b) }); err != nil {
		return err
	}
	files, size, err := dirSize(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "zrviz site: wrote %d files, %s, to %s\n", files, units.Bytes(size), dir)
	fmt.Fprintf(stdout, "serve it with any static file server, e.g.  python3 -m http.server -d %s 8000  and open http://localhost:8000/\n", dir)
	return nil
}

// buildWasm compiles cmd/zrviz-wasm for the browser and returns it (built in a temporary directory
// of its own: the go command does not write into the site's directory).
func buildWasm(ctx context.Context, src string, stderr io.Writer) ([]byte, error) {
	if _, err := os.Stat(filepath.Join(src, wasmPackage)); err != nil {
		return nil, inputError{fmt.Errorf("site: no %s under %s: zrviz site builds the WebAssembly from zrviz's source; "+
			"run it in a clone of zrviz (go run ./cmd/zrviz site DIR), or give --src or --wasm", wasmPackage, src)}
	}
	tmp, err := os.MkdirTemp("", "zrviz-site-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "zrviz.wasm")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, wasmPackage)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, inputError{errors.New("site: the go command is not in PATH: zrviz site builds the WebAssembly with it")}
		}
		return nil, fmt.Errorf("site: building %s for GOOS=js GOARCH=wasm: %w\n%s", wasmPackage, err, msg.Bytes())
	}
	return os.ReadFile(out)
}

// siteMarker is the file zrviz site leaves in the directory it writes: a directory holding it is
// one zrviz site made, which a later run may write again.
const siteMarker = ".zrviz-site"

// siteDir is the directory a site is written into (openSiteDir).
type siteDir struct{ dir string }

// openSiteDir makes dir ready to receive a site: it is created when missing; an existing one must
// be a directory (not a symbolic link to one) that is empty or holds siteMarker, and no source
// tree (go.mod, .git). Anything else is refused, saying what to do.
func openSiteDir(dir string) (*siteDir, error) {
	refuse := func(format string, args ...any) (*siteDir, error) {
		return nil, inputError{fmt.Errorf("site: "+format, args...)}
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, inputError{fmt.Errorf("site: %w", err)}
		}
	case err != nil:
		return nil, inputError{fmt.Errorf("site: %w", err)}
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse("%s is a symbolic link: zrviz site writes only into a directory itself; name the directory it points to, or a new one", dir)
	case !fi.IsDir():
		return refuse("%s is not a directory: give a new directory (zrviz site creates it)", dir)
	default:
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, inputError{fmt.Errorf("site: %w", err)}
		}
		marked := false
		var other []string
		for _, e := range entries {
			switch n := e.Name(); {
			case n == "go.mod" || n == ".git":
				return refuse("%s holds a source tree (%s): the site would overwrite its files (index.html, static/…); write it into a new directory, e.g. zrviz site %s",
					dir, n, filepath.Join(os.TempDir(), "zrviz-site"))
			case n == siteMarker && e.Type().IsRegular():
				marked = true
			default:
				other = append(other, n)
			}
		}
		if !marked && len(other) > 0 {
			return refuse("%s holds files zrviz site did not write (%s): it writes only into a new or empty directory, or one it wrote before (holding %s); give a new directory, or empty this one",
				dir, strings.Join(other[:min(len(other), 3)], ", "), siteMarker)
		}
	}
	d := &siteDir{dir: dir}
	return d, d.write(siteMarker, []byte("written by zrviz site: it may write this directory again\n"))
}

// write writes the file name (slash-separated, relative) into the site's directory without
// following a symbolic link: every directory on its way is created or must be a directory, and the
// file is written beside its place and renamed over it (a rename replaces what is there, never
// writes through it). A link found on the way is refused.
func (d *siteDir) write(name string, b []byte) error {
	parts := strings.Split(name, "/")
	p := d.dir
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(p, 0o755); err != nil {
				return fmt.Errorf("site: %w", err)
			}
		case err != nil:
			return fmt.Errorf("site: %w", err)
		case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
			return inputError{fmt.Errorf("site: %s is not a directory of the site (a symbolic link or a file): zrviz site does not write through it; remove it, or write the site into a new directory", p)}
		}
	}
	p = filepath.Join(p, parts[len(parts)-1])
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return inputError{fmt.Errorf("site: %s is not a regular file (a symbolic link, a directory): zrviz site does not write through it; remove it, or write the site into a new directory", p)}
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".zrviz-site-*")
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("site: %s: %w", p, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("site: %w", err)
	}
	return nil
}

// goEnv is `go env NAME` in dir.
func goEnv(ctx context.Context, dir, name string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "env", name)
	cmd.Dir = dir
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("site: go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// fsWalkFiles calls f with the name and content of every file of fsys.
func fsWalkFiles(fsys fs.FS, f func(name string, b []byte) error) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return f(p, b)
	})
}

// dirSize counts the files under dir and their bytes.
func dirSize(dir string) (files int, size int64, err error) {
	err = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files++
		size += fi.Size()
		return nil
	})
	return files, size, err
}
