package web

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// handleDeleteImage answers DELETE /api/images/{id}: an upload is taken out of the listing and the
// data dir at once (204); viewers that have it open keep it until they leave. The demo and the
// images given on the command line are refused (409), an unknown id is 404.
func (s *Server) handleDeleteImage(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	si, unused, err := s.store.remove(id)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	s.discard([]*StoredImage{si}, unused, "deleted")
	w.WriteHeader(http.StatusNoContent)
}

// holdImage marks the image {id} in use for the duration of the request (see
// [StoredImage.Acquire]), so --max-store never evicts an image a request is reading. An unknown id
// passes through: the handler answers 404 in its own words.
func (s *Server) holdImage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, release, err := s.acquire(chi.URLParam(r, "id")); err == nil {
			defer release()
		}
		next.ServeHTTP(w, r)
	})
}

// holdImageParam holds the image named by the "image" query parameter for the duration of the
// request; on /ws/run the handler runs for as long as the websocket lives, so the image is held until
// the viewer leaves.
func (s *Server) holdImageParam(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.URL.Query().Get("image"); id != "" {
			if _, release, err := s.acquire(id); err == nil {
				defer release()
			}
		}
		next.ServeHTTP(w, r)
	})
}
