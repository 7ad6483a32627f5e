package openaisim

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

func (c *rtSession) onItemCreate(ev *rtClientEvent) {
	var item map[string]any
	if err := json.Unmarshal(ev.Item, &item); err != nil || item == nil {
		c.sendError(ev.EventID, "invalid_request_error", "missing_required_parameter", "item", "Missing required parameter: 'item'.")
		return
	}
	it := &rtItem{truncateMs: -1}
	it.typ, _ = item["type"].(string)
	switch it.typ {
	case "message":
		it.role, _ = item["role"].(string)
		if it.role != "user" && it.role != "assistant" && it.role != "system" {
			c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "item.role",
				fmt.Sprintf("Invalid value: '%v'. Supported values are: 'user', 'assistant', and 'system'.", item["role"]))
			return
		}
		parts, _ := item["content"].([]any)
		var texts []string
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			switch pm["type"] {
			case "input_text", "output_text", "text":
				s, _ := pm["text"].(string)
				texts = append(texts, s)
			case "input_audio":
				if a, ok := pm["audio"].(string); ok {
					b, err := base64.StdEncoding.DecodeString(a)
					if err != nil {
						c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "item.content", "Invalid 'audio': not valid base64.")
						return
					}
					it.audioMs += len(b) / 2 * 1000 / SpeechRate
				}
				if s, ok := pm["transcript"].(string); ok {
					texts = append(texts, s)
				}
			default:
				c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "item.content.type",
					fmt.Sprintf("Invalid value: '%v'. Supported values are: 'input_text', 'input_audio', 'output_text' and 'output_audio'.", pm["type"]))
				return
			}
		}
		it.text = strings.Join(texts, " ")
	case "function_call_output":
		if cid, _ := item["call_id"].(string); cid == "" {
			c.sendError(ev.EventID, "invalid_request_error", "missing_required_parameter", "item.call_id", "Missing required parameter: 'item.call_id'.")
			return
		}
		it.text, _ = item["output"].(string)
	case "function_call":
		it.text, _ = item["arguments"].(string)
	default:
		c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "item.type",
			fmt.Sprintf("Invalid value: '%v'. Supported values are: 'message', 'function_call', and 'function_call_output'.", item["type"]))
		return
	}
	if id, _ := item["id"].(string); id != "" {
		it.id = id
	} else {
		it.id = c.s.newID("item")
	}
	item["id"], item["object"], item["status"] = it.id, "realtime.item", "completed"
	it.raw = item
	c.mu.Lock()
	prev := c.lastItemIDLocked()
	c.items = append(c.items, it)
	c.mu.Unlock()
	c.itemAdded(prev, item)
	c.itemDone(item)
}

func (c *rtSession) findItemLocked(id string) (int, *rtItem) {
	for i, it := range c.items {
		if it.id == id {
			return i, it
		}
	}
	return -1, nil
}

func (c *rtSession) onTruncate(ev *rtClientEvent) {
	if ev.AudioEndMs == nil {
		c.sendError(ev.EventID, "invalid_request_error", "missing_required_parameter", "audio_end_ms", "Missing required parameter: 'audio_end_ms'.")
		return
	}
	c.mu.Lock()
	_, it := c.findItemLocked(ev.ItemID)
	switch {
	case it == nil:
		c.mu.Unlock()
		c.sendError(ev.EventID, "invalid_request_error", "item_truncate_invalid_item_id", "item_id",
			fmt.Sprintf("Item with item_id not found: %s", ev.ItemID))
		return
	case it.role != "assistant" || it.audioMs == 0:
		c.mu.Unlock()
		c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "item_id", "Only assistant messages with audio can be truncated.")
		return
	case *ev.AudioEndMs < 0 || *ev.AudioEndMs > it.audioMs:
		c.mu.Unlock()
		c.sendError(ev.EventID, "invalid_request_error", "invalid_value", "audio_end_ms",
			fmt.Sprintf("audio_end_ms (%d) must not exceed the audio length (%d ms).", *ev.AudioEndMs, it.audioMs))
		return
	}
	it.truncateMs = *ev.AudioEndMs
	full := it.audioMs
	c.mu.Unlock()
	c.s.mu.Lock()
	c.s.truncations = append(c.s.truncations, Truncation{Session: c.id, ItemID: ev.ItemID, AudioEndMs: *ev.AudioEndMs, AudioMs: full})
	c.s.mu.Unlock()
	c.send(map[string]any{"type": "conversation.item.truncated", "item_id": ev.ItemID, "content_index": ev.ContentIndex, "audio_end_ms": *ev.AudioEndMs})
}

func (c *rtSession) onDelete(ev *rtClientEvent) {
	c.mu.Lock()
	i, it := c.findItemLocked(ev.ItemID)
	if it != nil {
		c.items = append(c.items[:i], c.items[i+1:]...)
	}
	c.mu.Unlock()
	if it == nil {
		c.sendError(ev.EventID, "invalid_request_error", "item_delete_invalid_item_id", "item_id",
			fmt.Sprintf("Item with item_id not found: %s", ev.ItemID))
		return
	}
	c.send(map[string]any{"type": "conversation.item.deleted", "item_id": ev.ItemID})
}
