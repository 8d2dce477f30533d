package web

// ImageCount returns how many images the server serves: the demo, the images given at start and
// the uploads kept in its data directory.
func (s *Server) ImageCount() int { return len(s.images()) }
