package web

import "strings"

// localPrefix starts the id of an image the static site opened from the user's computer
// (cmd/zrviz-wasm/local.go): "local-" and the first 16 hex digits of its imgio.Fingerprint.
const localPrefix = "local-"

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
	return strings.HasPrefix(id, localPrefix) && len(id) == len(localPrefix)+16
}
