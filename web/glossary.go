package web

import (
	"net/http"

	"github.com/zrviz/zrviz/templates"
)

// handleGlossaryPage serves GET /glossary: every term the player explains (package glossary). The
// player pages carry the same entries for their popovers.
func (s *Server) handleGlossaryPage(w http.ResponseWriter, r *http.Request) {
	p := templates.GlossaryPage{
		Layout: s.layout("Glossary", "", templates.Crumb{Label: "glossary"}),
		Groups: templates.GlossaryGroups(),
	}
	s.render(w, r, http.StatusOK, templates.Glossary(p))
}
