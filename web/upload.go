package web

import (
	"net/http"
	"sync"
)

// uploads tracks the progress of uploads by client-chosen token.
type uploads struct {
	mu sync.Mutex
}

func newUploads() *uploads { return &uploads{} }

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) { s.Error(w, r, errNotYet) }
func (s *Server) handleUploadProgress(w http.ResponseWriter, r *http.Request) {
	s.Error(w, r, errNotYet)
}
