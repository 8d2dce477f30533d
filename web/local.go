package web

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/templates"
)

// localPrefix starts the id of an image the static site opened from the user's computer
// (cmd/zrviz-wasm/local.go): "local-" and the first localDigits hex digits of its imgio.Fingerprint.
const (
	localPrefix = "local-"
	localDigits = 16
)

// LocalImageID is the id of an image opened from the user's computer whose imgio.Fingerprint is fp:
// the same file gets the same id, so a permalink names it after a reload.
func LocalImageID(fp string) string {
	return localPrefix + fp[:min(len(fp), localDigits)]
}

// LocalImage reports whether an image of that id is loaded, and its name: the static site's
// worker asks before opening a file it may already hold.
func (s *Server) LocalImage(id string) (name string, ok bool) {
	si, err := s.image(id)
	if err != nil {
		return "", false
	}
	return si.Name, true
}

// isLocalID reports whether id names an image opened from the user's computer.
func isLocalID(id string) bool {
	fp, ok := strings.CutPrefix(id, localPrefix)
	if !ok || len(fp) != localDigits {
		return false
	}
	for _, c := range fp {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// localMissing answers a request for a local image this worker does not hold: the permalink
// outlived the page that opened the file (a reload, another browser), and only the user's computer
// has the image. The page asks for the same file again; its script reloads the permalink when the
// file's fingerprint matches. localGate calls it, in the static site, for an unknown id that
// isLocalID accepts; the status is 404, as for any image not loaded.
func (s *Server) localMissing(w http.ResponseWriter, r *http.Request, id string) {
	p := templates.LocalMissingPage{
		Layout:      s.layout("Open the image again", "js/localimage.js", templates.Crumb{Label: "images", Href: "/"}, templates.Crumb{Label: id}),
		ID:          id,
		Fingerprint: strings.TrimPrefix(id, localPrefix),
	}
	s.render(w, r, http.StatusNotFound, templates.LocalMissing(p))
}

// localGate answers the pages of a local image this worker does not hold with localMissing, before
// their handlers say "no such image": the static site's image page routes (/images/{id}/…) use it.
// An image that is loaded, and any id that does not name a local image, go on to next.
func (s *Server) localGate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "id")
		if _, ok := s.LocalImage(id); !ok && isLocalID(id) {
			s.localMissing(w, r, id)
			return
		}
		next.ServeHTTP(w, r)
	})
}
