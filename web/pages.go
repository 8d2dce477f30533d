package web

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"

	"github.com/zrviz/zrviz/templates"
)

// render writes a templ component as an HTML page with status code.
func (s *Server) render(w http.ResponseWriter, r *http.Request, code int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if err := c.Render(r.Context(), w); err != nil {
		s.log.Warn("render page", "path", r.URL.Path, "err", err)
	}
}

// pageError renders err as an HTML error page, with the status Error would
// give it.
func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := s.errorStatus(err)
	if code >= 500 {
		s.log.Error("page failed", "path", r.URL.Path, "err", err)
	}
	s.render(w, r, code, templates.Error(templates.ErrorPage{
		Layout:  templates.Layout{Title: http.StatusText(code), Assets: s.assets},
		Status:  code,
		Message: msg,
	}))
}

// handleImagesPage serves GET /: the loaded images and the upload area.
func (s *Server) handleImagesPage(w http.ResponseWriter, r *http.Request) {
	p := templates.ImagesPage{
		Layout:    templates.Layout{Title: "Images", Assets: s.assets, Script: "js/images.js"},
		MaxUpload: s.cfg.MaxUpload,
	}
	for _, si := range s.images() {
		p.Images = append(p.Images, templates.ImageItem{ID: si.ID, Name: si.Name, Size: si.Size, Format: string(si.Format), Demo: si.ID == DemoID})
	}
	s.render(w, r, http.StatusOK, templates.Images(p))
}

// handleImagePage serves GET /images/{id}: summary, segment map, tree.
func (s *Server) handleImagePage(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := templates.ImagePage{
		Layout: templates.Layout{Title: si.Name, Assets: s.assets},
		ID:     si.ID,
		Name:   si.Name,
	}
	s.render(w, r, http.StatusOK, templates.Image(p))
}

// handleFilePage serves GET /images/{id}/file?path=: a file's block map.
func (s *Server) handleFilePage(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := templates.FilePage{
		Layout: templates.Layout{Title: r.URL.Query().Get("path"), Assets: s.assets},
		ID:     si.ID,
		Path:   r.URL.Query().Get("path"),
	}
	s.render(w, r, http.StatusOK, templates.File(p))
}

// handleRunPage serves GET /images/{id}/run?...: the player.
func (s *Server) handleRunPage(w http.ResponseWriter, r *http.Request) {
	si, err := s.image(chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := templates.RunPage{
		Layout: templates.Layout{Title: "Run", Assets: s.assets},
		ID:     si.ID,
		Name:   si.Name,
		Path:   r.URL.Query().Get("path"),
	}
	s.render(w, r, http.StatusOK, templates.Run(p))
}
