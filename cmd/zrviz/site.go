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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return inputError{fmt.Errorf("site: %w", err)}
	}
	wasmOut := filepath.Join(dir, "zrviz.wasm")
	if *wasm != "" {
		if err := copyFile(*wasm, wasmOut); err != nil {
			return inputError{fmt.Errorf("site: --wasm: %w", err)}
		}
	} else if err := buildWasm(ctx, *src, wasmOut, stderr); err != nil {
		return err
	}
	goroot, err := goEnv(ctx, *src, "GOROOT")
	if err != nil {
		return err
	}
	// wasm_exec.js must be the one of the toolchain that built zrviz.wasm.
	if err := copyFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"), filepath.Join(dir, "wasm_exec.js")); err != nil {
		return fmt.Errorf("site: Go's wasm_exec.js: %w", err)
	}
	site := static.SiteFiles()
	err = fsWalkFiles(site, func(name string, b []byte) error {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
		if name == "index.html" {
			// Hosts that answer an unknown path with 404.html (GitHub Pages, Netlify) start a deep
			// link's first visit there.
			return os.WriteFile(filepath.Join(dir, "404.html"), b, 0o644)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	assets, err := static.New()
	if err != nil {
		return err
	}
	if err := assets.WriteDir(filepath.Join(dir, "static")); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	files, size, err := dirSize(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "zrviz site: wrote %d files, %s, to %s\n", files, units.Bytes(size), dir)
	fmt.Fprintf(stdout, "serve it with any static file server, e.g.  python3 -m http.server -d %s 8000  and open http://localhost:8000/\n", dir)
	return nil
}

// buildWasm compiles cmd/zrviz-wasm for the browser into out.
func buildWasm(ctx context.Context, src, out string, stderr io.Writer) error {
	if _, err := os.Stat(filepath.Join(src, wasmPackage)); err != nil {
		return inputError{fmt.Errorf("site: no %s under %s: zrviz site builds the WebAssembly from zrviz's source; "+
			"run it in a clone of zrviz (go run ./cmd/zrviz site DIR), or give --src or --wasm", wasmPackage, src)}
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", abs, wasmPackage)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return inputError{errors.New("site: the go command is not in PATH: zrviz site builds the WebAssembly with it")}
		}
		return fmt.Errorf("site: building %s for GOOS=js GOARCH=wasm: %w\n%s", wasmPackage, err, msg.Bytes())
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

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
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
