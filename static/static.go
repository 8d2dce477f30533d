// Package static embeds the front end's ES modules and CSS and serves them
// under content-hashed URLs, so a browser may cache them forever and still
// sees every change after an upgrade.
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
)

//go:embed js/*.js css/*.css img/*.svg
var files embed.FS

// siteFiles are the static site's own files (zrviz site): its service worker and first page.
//
//go:embed site/*
var siteFiles embed.FS

// SiteFiles returns the static site's own files (sw.js, index.html, boot.js), at the root of the FS.
func SiteFiles() fs.FS {
	sub, err := fs.Sub(siteFiles, "site")
	if err != nil {
		panic(err) // the embed pattern names the directory: it is always there
	}
	return sub
}

// Favicon returns the site's icon (img/favicon.svg), for /favicon.ico.
func Favicon() ([]byte, error) { return fs.ReadFile(files, "img/favicon.svg") }

// Assets is the served form of the embedded files: JavaScript imports are
// rewritten to carry the version, so that a module graph loaded from one
// hashed entry point is itself fully versioned.
type Assets struct {
	version string
	body    map[string][]byte
	modTime time.Time
}

// relImport matches the specifier of a relative static import or export
// ("from './ws.js'"), which is the only import form the modules use.
var relImport = regexp.MustCompile(`(from\s+['"])(\./[A-Za-z0-9_./-]+\.js)(['"])`)

// New reads the embedded files and computes their version: the first 12
// hex digits of the SHA-256 of every file's name and content.
func New() (*Assets, error) {
	a := &Assets{body: map[string][]byte{}, modTime: time.Unix(0, 0)}
	var names []string
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	h := sha256.New()
	raw := map[string][]byte{}
	for _, n := range names {
		b, err := fs.ReadFile(files, n)
		if err != nil {
			return nil, err
		}
		raw[n] = b
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write(b)
	}
	a.version = hex.EncodeToString(h.Sum(nil))[:12]
	for n, b := range raw {
		if strings.HasSuffix(n, ".js") {
			b = relImport.ReplaceAll(b, []byte("${1}${2}?v="+a.version+"${3}"))
		}
		a.body[n] = b
	}
	return a, nil
}

// Each calls f with every asset's name ("js/ws.js") and content, as ServeHTTP serves it (a static
// file server that ignores the version query serves the same bytes), in name order, stopping at
// f's first error: the writer chooses how to write them (zrviz site never follows a link).
func (a *Assets) Each(f func(name string, b []byte) error) error {
	names := make([]string, 0, len(a.body))
	for n := range a.body {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := f(n, a.body[n]); err != nil {
			return err
		}
	}
	return nil
}

// Version returns the content hash shared by every asset URL.
func (a *Assets) Version() string { return a.version }

// Hashed returns the URL of the asset name ("js/run.js", "css/app.css"),
// under /static/ and with the version as its query.
func (a *Assets) Hashed(name string) string {
	return "/static/" + strings.TrimPrefix(name, "/") + "?v=" + a.version
}

// ServeHTTP serves the asset named by the request path with the /static/
// prefix already stripped. A request carrying the current version is
// cacheable for a year; any other is served with no-cache so the browser
// revalidates.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	b, ok := a.body[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if strings.HasSuffix(name, ".js") {
		// Some systems' mime tables say application/javascript or nothing;
		// module scripts need a JavaScript type.
		ct = "text/javascript; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == a.version {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("ETag", `"`+a.version+`"`)
	http.ServeContent(w, r, name, a.modTime, bytes.NewReader(b))
}
