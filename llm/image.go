package llm

import (
	"encoding/base64"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
)

// Image is a picture shown to the model with a message: a URL the provider fetches itself, or
// bytes sent inline as a base64 data URL. Only user messages carry images.
type Image struct {
	// URL is an https URL the provider can fetch (used when Data is empty).
	URL string
	// Data is the image itself, with its MIME type (image/png, image/jpeg, image/webp, image/gif).
	Data     []byte
	MIMEType string
}

// ref is the image_url value: the URL, or a data URL of the bytes.
func (im Image) ref() string {
	if len(im.Data) == 0 {
		return im.URL
	}
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(im.MIMEType) + base64.StdEncoding.EncodedLen(len(im.Data)))
	b.WriteString("data:")
	b.WriteString(im.MIMEType)
	b.WriteString(";base64,")
	b.WriteString(base64.StdEncoding.EncodeToString(im.Data))
	return b.String()
}

// responsesContent is a user message with images as Responses input parts: the text, then
// each image as input_image (detail auto).
func responsesContent(m Message) responses.ResponseInputMessageContentListParam {
	parts := make(responses.ResponseInputMessageContentListParam, 0, 1+len(m.Images))
	parts = append(parts, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: m.Content}})
	for _, im := range m.Images {
		parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
			ImageURL: param.NewOpt(im.ref()), Detail: responses.ResponseInputImageDetailAuto}})
	}
	return parts
}

// chatContent is a user message with images as chat completion content parts (text, then
// image_url parts).
func chatContent(m Message) []openai.ChatCompletionContentPartUnionParam {
	parts := make([]openai.ChatCompletionContentPartUnionParam, 0, 1+len(m.Images))
	parts = append(parts, openai.TextContentPart(m.Content))
	for _, im := range m.Images {
		parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: im.ref(), Detail: "auto"}))
	}
	return parts
}
