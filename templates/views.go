// Package templates holds the templ components of the zrviz web pages.
// Pages are exported functions that take plain values defined here, so the
// web package converts image and engine data into them and the components
// stay free of I/O.
package templates

// Assets resolves an asset name ("js/run.js") to its versioned URL.
type Assets interface {
	Hashed(name string) string
}

// Crumb is one step of the breadcrumb in the page header.
type Crumb struct {
	Label string
	Href  string // "" for the current page
}

// Layout carries what every page shares.
type Layout struct {
	Title  string
	Crumbs []Crumb
	Assets Assets
	Script string // the page's entry module ("js/images.js"), "" for none
	// BodyClass styles the whole page ("player" makes the run page one
	// fixed screen).
	BodyClass string
	// Contract is what the page's modules share with the server (web's pageContract), rendered as
	// JSON in <script id="zrviz-contract">, where static/js/contract.js reads it; nil for none.
	Contract any
	// Static is the static site (zrviz site): no uploads and no rooms, which the pages say where a
	// user would look for them.
	Static bool
}

// ImageItem is one loaded image in the images list.
type ImageItem struct {
	ID     string
	Name   string
	Size   int64
	Format string
	Added  string // upload time, UTC, "2006-01-02 15:04:05"
	Demo   bool
	Upload bool // stored upload: the page offers to delete it
	Local  bool // opened from the user's computer in the static site
}

// Link is a labelled link with a line of explanation.
type Link struct {
	Label string
	Href  string
	Note  string
}

// ImagesPage is the data of the images page.
type ImagesPage struct {
	Layout
	Images    []ImageItem
	MaxUpload int64
	Tour      []Link // a guided demo on the demo image; empty without it
}

// KV is one labelled value in a summary table.
type KV struct {
	Key   string
	Value string
	Title string // hover text explaining the field
}

// FileItem is one entry of an image's directory tree.
type FileItem struct {
	Path  string
	Name  string
	Depth int
	Ino   uint32
	Type  string // "file", "dir", "symlink", "other"
	Size  int64
	// Compressed is "compressed (algorithm, cluster N blocks)" for a compressed file, else "".
	Compressed string
	// State is a directory's: "complete" when all its entries follow it, "partial" when the page
	// shows only those up to After (its last name shown, "" for none) and the script fetches the
	// rest from GET /api/images/{id}/dir when it is opened; "" for other entries.
	State string
	After string
}

// ImagePage is the data of one image's page.
type ImagePage struct {
	Layout
	ID   string
	Name string
	// Start links the files worth zeroing first, above the tree (the demo's: its tour), so that
	// they are not rows deep in a long listing.
	Start        []Link
	Geometry     []KV
	Counters     []KV
	Features     []string
	Current      []KV
	Files        []FileItem
	FilesMore    int      // > 0 when paths were left out of Files to keep the page small
	TreePage     int      // entries of a directory the tree shows, and fetches, at a time
	Problems     []string // what the listing stepped over (a damaged or hostile tree)
	MainSegments uint32
	BlocksPerSeg uint32
}

// ExtentItem is one run of a file's slot map.
type ExtentItem struct {
	Index uint64 `json:"index"`
	Count uint64 `json:"count"`
	State string `json:"state"` // "addr", "null", "new", "compress"
	Addr  uint32 `json:"addr"`
	Segno int64  `json:"segno"` // -1 when State is not "addr"
}

// DnodeItem is one dnode (the inode or a direct node) of a file.
type DnodeItem struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Nid     uint32 `json:"nid"`
	Blkaddr uint32 `json:"-"`
	Start   uint64 `json:"start"`
	Len     int    `json:"len"`
	Mapped  int    `json:"-"` // slots holding an address
	New     int    `json:"-"` // NEW_ADDR slots
}

// Preset is a named byte range the run page can start with.
type Preset struct {
	Label  string
	Offset int64
	Length int64
}

// FilePage is the data of one file's block map page.
type FilePage struct {
	Layout
	ID      string
	Path    string
	Ino     uint32
	Type    string
	Size    int64
	Blocks  uint64
	Inline  bool
	Inode   []KV
	Extents []ExtentItem
	Dnodes  []DnodeItem
	Presets []Preset
	Err     string // why the map could not be read, when it could not
	// Compressed is "compressed (algorithm, cluster N blocks)" for a compressed file, else "".
	Compressed string
	// MapNext is the file block index where the extents the page leaves out start (0: none left
	// out); MapURL is the map API's page from there. DnodesLeft counts the dnodes not listed,
	// DnodesURL is the API that lists them all.
	MapNext    uint64
	MapURL     string
	DnodesLeft int
	DnodesURL  string
	// MainBlkaddr and BlocksPerSeg let the block map colour each block by
	// its own segment.
	MainBlkaddr  uint32
	BlocksPerSeg uint32
}

// RunPage is the data of the player page; the player itself fetches the
// run over the websocket.
type RunPage struct {
	Layout
	ID       string
	Name     string
	Path     string
	Size     int64
	Offset   int64
	Length   int64
	Mode     string // "per-block", "batched", "both"
	KeepSize bool
	Step     int64
	RunEnd   bool
	Presets  []Preset
	Before   []string // operations run first, in the ops language
	Follow   string   // the room code on a follower's page, "" otherwise
	Sandbox  string   // the slot list of a sandbox run (then ID is "")
	OpForms  string   // the ops language's forms as JSON (request.Forms), for the next operation
	Paces    []Pace   // the pace menu, in its order (web's pacePresets)
	// Op is the played call as the query's op field names it ("zero", "punch", "truncate"); a
	// truncate's new size is Offset. Ops are the form's choices, Op's among them; Played says what
	// is played in the page's words ("fallocate(PUNCH_HOLE) of /a"), TruncSize is the size field's
	// value.
	Op        string
	Ops       []OpChoice
	Played    string
	TruncSize int64
	// CompareURL is the compare page of this range (a zero and a punch side by side) when the run
	// is a zero on an image, "" otherwise.
	CompareURL string
}

// OpChoice is one call the run form offers: the op field's value, its label, and which fields it
// takes (Range: offset and length; KeepSize: the KEEP_SIZE box; Size: truncate's size).
type OpChoice struct {
	Value, Label          string
	Range, KeepSize, Size bool
	Selected              bool
}

// Pace is one option of the player's pace menu; static/js/pace.js reads the paces the server takes
// from the menu, so the page writes none of its own.
type Pace struct {
	Value   string // what the "pace" control sends
	Label   string
	Default bool // the pace a run plays at unless the page asks for another
}

// ErrorPage is the data of an error page (404 and friends).
type ErrorPage struct {
	Layout
	Status  int
	Message string
}
