package web

// treePerDir is how many entries of one directory the image page's tree shows before it says the
// directory goes on (State "partial"); the page's script asks GET /api/images/{id}/dir for the next
// ones, this many at a time, when the reader opens the directory or asks for more.
const treePerDir = 200
