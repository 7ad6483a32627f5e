package world

import (
	"bytes"
	"encoding/binary"
	"image"
	_ "image/gif"  // image.DecodeConfig of GIF uploads
	_ "image/jpeg" // and JPEG
	_ "image/png"  // and PNG
	"path"
	"strconv"
	"strings"
)

// File is an uploaded file: a multipart files[n] part, or a simulated
// user's upload.
type File struct {
	Name        string
	ContentType string // "" takes the type from the name's extension
	Description string
	Data        []byte
}

// Attachment is a file attached to a message. The world keeps its bytes;
// its URLs are the CDN's (signed when rendered), not the world's.
// https://discord.com/developers/docs/resources/message#attachment-object
type Attachment struct {
	ID          AttachmentID
	Filename    string
	Description string
	ContentType string
	Size        int
	// Width and Height are set for images whose header could be read.
	Width, Height int
}

// MaxUpload is the most a message's files may weigh together (the limit
// of a guild without boosts).
const MaxUpload = 10 << 20

// MaxFiles is how many files one message may carry.
const MaxFiles = 10

type file struct {
	channel ChannelID
	message MessageID
	att     Attachment
	data    []byte
}

// storeFilesLocked checks and keeps a message's files.
func (w *World) storeFilesLocked(ch ChannelID, files []File) ([]Attachment, error) {
	if len(files) > MaxFiles {
		return nil, invalidBody("files", "Must be 10 or fewer in length.")
	}
	total := 0
	for _, f := range files {
		total += len(f.Data)
	}
	if total > MaxUpload {
		return nil, ErrTooLarge
	}
	var out []Attachment
	for i, f := range files {
		name := path.Base(strings.ReplaceAll(f.Name, "\\", "/"))
		if name == "" || name == "." || name == "/" {
			return nil, invalidBody("attachments."+strconv.Itoa(i)+".filename", "This field is required")
		}
		a := Attachment{
			ID: AttachmentID(w.ids.nextString()), Filename: name, Description: f.Description,
			ContentType: f.ContentType, Size: len(f.Data),
		}
		if a.ContentType == "" {
			a.ContentType = contentTypeOf(name)
		}
		if strings.HasPrefix(a.ContentType, "image/") {
			a.Width, a.Height = imageSize(f.Data)
		}
		w.st.files[a.ID] = &file{channel: ch, att: a, data: bytes.Clone(f.Data)}
		out = append(out, a)
	}
	return out, nil
}

// FileData returns an attachment's bytes for the CDN: it must be in
// channel ch under that filename, and its message must not be deleted.
func (w *World) FileData(ch ChannelID, id AttachmentID, filename string) (Attachment, []byte, bool) {
	w.lock()
	defer w.mu.Unlock()
	f := w.st.files[id]
	if f == nil || f.channel != ch || f.att.Filename != filename {
		return Attachment{}, nil, false
	}
	if m := w.st.messages[f.message]; m == nil || m.Deleted {
		return Attachment{}, nil, false
	}
	return f.att, f.data, true
}

// contentTypeOf is the MIME type Discord gives a file by its extension.
func contentTypeOf(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".txt":
		return "text/plain; charset=utf-8"
	case ".json":
		return "application/json; charset=utf-8"
	case ".mp3":
		return "audio/mpeg"
	case ".ogg":
		return "audio/ogg"
	case ".wav":
		return "audio/wav"
	case ".mp4":
		return "video/mp4"
	case ".pdf":
		return "application/pdf"
	}
	return "application/octet-stream"
}

// imageSize reads an image's dimensions from its header (PNG, JPEG, GIF,
// WebP), or 0, 0.
func imageSize(b []byte) (int, int) {
	if w, h, ok := webpSize(b); ok {
		return w, h
	}
	c, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return 0, 0
	}
	return c.Width, c.Height
}

// webpSize reads a WebP's canvas size: VP8X (extended), VP8L (lossless) or
// VP8 (lossy) header.
// https://developers.google.com/speed/webp/docs/riff_container
func webpSize(b []byte) (int, int, bool) {
	if len(b) < 30 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return 0, 0, false
	}
	le24 := func(p []byte) int { return int(p[0]) | int(p[1])<<8 | int(p[2])<<16 }
	switch string(b[12:16]) {
	case "VP8X":
		return le24(b[24:27]) + 1, le24(b[27:30]) + 1, true
	case "VP8L":
		if b[20] != 0x2f {
			return 0, 0, false
		}
		v := binary.LittleEndian.Uint32(b[21:25])
		return int(v&0x3fff) + 1, int(v>>14&0x3fff) + 1, true
	case "VP8 ":
		if b[23] != 0x9d || b[24] != 0x01 || b[25] != 0x2a {
			return 0, 0, false
		}
		return int(binary.LittleEndian.Uint16(b[26:28]) & 0x3fff), int(binary.LittleEndian.Uint16(b[28:30]) & 0x3fff), true
	}
	return 0, 0, false
}
