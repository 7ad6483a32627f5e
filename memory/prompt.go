package memory

import (
	"fmt"
	"strings"

	"github.com/banterbot/banter/llm"
	"github.com/banterbot/banter/store"
)

// recordFactsName is the extraction model's one tool.
const recordFactsName = "record_facts"

// extractInstructions tell the memory model what to extract.
const extractInstructions = `You keep the long-term memory of a Discord companion bot. From the new messages below,
note the lasting facts people state about themselves (their pets, work, home, plans, likes,
relationships) or about this server (its events, its customs). Skip small talk, jokes, opinions
of the moment, questions and anything said about someone else. Write each fact as a short
statement in the third person that names its subject, e.g. "Alice has a cat named Miso".
The known facts are numbered. When a new fact corrects or updates a known fact of the same
subject, give that number in supersedes; when it only repeats one, give its number in same_as;
otherwise 0 for both. Call record_facts once, with an empty list when there is nothing new.`

// recordFactsTool is the schema of the extraction answer (parseAnswer reads it).
var recordFactsTool = llm.Tool{
	Name:        recordFactsName,
	Description: "Record the lasting facts of the new messages.",
	Parameters: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"facts": map[string]any{
				"type": "array",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"subject":            map[string]any{"type": "string", "description": "The user id of the member the fact is about, or \"server\"."},
						"statement":          map[string]any{"type": "string", "description": "The fact, one short sentence naming its subject."},
						"source_message_ids": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Ids of the messages that state it."},
						"supersedes":         map[string]any{"type": "integer", "description": "Number of the known fact it corrects, else 0."},
						"same_as":            map[string]any{"type": "integer", "description": "Number of the known fact it repeats, else 0."},
					},
					"required":             []any{"subject", "statement", "source_message_ids", "supersedes", "same_as"},
					"additionalProperties": false,
				},
			},
		},
		"required":             []any{"facts"},
		"additionalProperties": false,
	},
	Strict: true,
}

// extractRequest renders one batch and the known facts of its subjects for the model.
func extractRequest(model string, batch []store.Message, known []store.Fact) llm.GenerateRequest {
	var b strings.Builder
	b.WriteString("Known facts:\n")
	if len(known) == 0 {
		b.WriteString("(none)\n")
	}
	for i, f := range known {
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, subjectLabel(f), f.Statement)
	}
	b.WriteString("\nNew messages:\n")
	for _, m := range batch {
		fmt.Fprintf(&b, "[msg %s] %s (user id %s): %s\n", m.ID, m.AuthorName, m.AuthorID, m.Content)
	}
	return llm.GenerateRequest{
		Model:        model,
		Instructions: extractInstructions,
		Messages:     []llm.Message{{Role: llm.RoleUser, Content: b.String()}},
		Tools:        []llm.Tool{recordFactsTool},
		ToolChoice:   llm.ToolChoiceRequired,
	}
}

// subjectLabel names a fact's subject for the model.
func subjectLabel(f store.Fact) string {
	if f.SubjectID == store.FactServer {
		return "server"
	}
	return fmt.Sprintf("user id %s, %s", f.SubjectID, f.SubjectName)
}
