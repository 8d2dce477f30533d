package web

import (
	"errors"
	"net/http"
)

var errNotYet = errors.New("web: not implemented yet")

func (s *Server) handleListImages(w http.ResponseWriter, r *http.Request) { s.Error(w, r, errNotYet) }
func (s *Server) handleInspect(w http.ResponseWriter, r *http.Request)    { s.Error(w, r, errNotYet) }
func (s *Server) handleMap(w http.ResponseWriter, r *http.Request)        { s.Error(w, r, errNotYet) }
func (s *Server) handleDnodes(w http.ResponseWriter, r *http.Request)     { s.Error(w, r, errNotYet) }
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request)        { s.Error(w, r, errNotYet) }
func (s *Server) handleSegments(w http.ResponseWriter, r *http.Request)   { s.Error(w, r, errNotYet) }
func (s *Server) handleSegment(w http.ResponseWriter, r *http.Request)    { s.Error(w, r, errNotYet) }
