package web

import "net/http"

func (s *Server) handleWSRun(w http.ResponseWriter, r *http.Request) { s.Error(w, r, errNotYet) }
