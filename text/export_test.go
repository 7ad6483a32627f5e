package text

// SendMessageTool is the reply tool, for the benchmark's minimal bot (which offers the same
// tool through the same client).
var SendMessageTool = sendMessageTool
