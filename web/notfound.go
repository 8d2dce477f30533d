package web

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/static"
)

// handleNotFound answers a path no route serves: an HTML page with the site's navigation for a
// browser, the JSON error body for the API and for clients that asked for JSON. A browser's
// Accept names text/html; fetch and curl send */* or application/json.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	err := notFound("page", r.URL.Path)
	if strings.HasPrefix(r.URL.Path, "/api/") || !wantsHTML(r) {
		s.Error(w, r, err)
		return
	}
	s.pageError(w, r, err)
}

// wantsHTML reports whether the request's Accept header prefers text/html to JSON: it names
// text/html (or application/xhtml+xml) with a quality at least that of application/json.
func wantsHTML(r *http.Request) bool {
	html, js := -1.0, -1.0
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			q = parseQ(v)
		}
		switch mt {
		case "text/html", "application/xhtml+xml":
			html = max(html, q)
		case "application/json":
			js = max(js, q)
		}
	}
	return html > 0 && html >= js
}

// parseQ reads an Accept quality ("0.8"); a malformed one counts as 0.
func parseQ(v string) float64 {
	q, err := strconv.ParseFloat(v, 64)
	if err != nil || q < 0 {
		return 0
	}
	return min(q, 1)
}

// handleFavicon serves the site's icon at /favicon.ico, where browsers and feed readers look for
// it whatever the page's <link rel="icon"> says.
func (s *Server) handleFavicon(w http.ResponseWriter, r *http.Request) {
	b, err := static.Favicon()
	if err != nil {
		s.Error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.Write(b)
}
