package web

import (
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/zrviz/zrviz/imgio"
)

// StoredImage is an image the server offers. Its fields do not change after
// it is stored.
type StoredImage struct {
	ID     string       `json:"id"`
	Name   string       `json:"name"`
	Size   int64        `json:"size"`   // expanded (raw) size in bytes
	Format imgio.Format `json:"format"` // the format it arrived in
	Added  time.Time    `json:"added"`
	Image  *imgio.Image `json:"-"`
}

// store holds the loaded images. An image enters it only once fully
// opened, so a listed image is always usable.
type store struct {
	mu     sync.RWMutex
	images map[string]*StoredImage
	closed bool // after removeAll: an upload finishing late is refused
}

func newStore() *store { return &store{images: map[string]*StoredImage{}} }

// add stores si unless its ID is taken; it returns the stored image and
// whether one was already there. After removeAll it stores nothing and
// returns errClosed.
func (st *store) add(si *StoredImage) (*StoredImage, bool, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, false, errClosed
	}
	if old, ok := st.images[si.ID]; ok {
		return old, true, nil
	}
	st.images[si.ID] = si
	return si, false, nil
}

// errClosed: the server is shutting down (503).
var errClosed = errors.New("server shutting down")

func (st *store) get(id string) (*StoredImage, bool) {
	st.mu.RLock()
	defer st.mu.RUnlock()
	si, ok := st.images[id]
	return si, ok
}

// list returns the images, "demo" first, then oldest first.
func (st *store) list() []*StoredImage {
	st.mu.RLock()
	out := make([]*StoredImage, 0, len(st.images))
	for _, si := range st.images {
		out = append(out, si)
	}
	st.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.ID == DemoID) != (b.ID == DemoID) {
			return a.ID == DemoID
		}
		if !a.Added.Equal(b.Added) {
			return a.Added.Before(b.Added)
		}
		return a.ID < b.ID
	})
	return out
}

func (st *store) removeAll() []*StoredImage {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]*StoredImage, 0, len(st.images))
	for _, si := range st.images {
		out = append(out, si)
	}
	st.images = map[string]*StoredImage{}
	st.closed = true
	return out
}

// DemoID is the id of the embedded demo image.
const DemoID = "demo"

// image returns the stored image id, or an error wrapping ErrNotFound.
func (s *Server) image(id string) (*StoredImage, error) {
	si, ok := s.store.get(id)
	if !ok {
		return nil, &NotFoundError{What: "image", Name: id}
	}
	return si, nil
}

// images returns every stored image, the demo first.
func (s *Server) images() []*StoredImage { return s.store.list() }
