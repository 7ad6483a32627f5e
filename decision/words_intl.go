package decision

import "unicode/utf8"

// Word lists for the languages banter's users mix into their chat (Spanish,
// Hindi and Hinglish, German, French, Portuguese, Italian, Russian,
// Chinese, Japanese), and for speech recognition. Like the English lists
// they are part-of-speech cues, not a vocabulary.
var (
	// intlGreetingWords greet or thank, as "hey" and "thanks" do. "ay",
	// "ey", "eh" and "hay" are how a recognizer often writes "hey".
	intlGreetingWords = []string{
		"ay", "ey", "eh", "hay", "ayy", "ei", "namaskar", "namasté", "привет", "приветик", "здравствуйте",
		"спасибо", "пожалуйста", "你好", "您好", "嗨", "谢谢", "请", "こんにちは", "おはよう", "こんばんは",
		"ありがとう", "bitte", "por", "favor", "hallöchen", "buongiorno", "grazie", "gracias", "shukriya", "dhanyavaad",
	}
	// intlDiscourseWords open a sentence without content ("oye banter, …",
	// "arre banter sun na"): the name after them is read as if it started
	// the sentence, so a statement about it still is one ("yaar banter phir
	// se hang ho gaya").
	intlDiscourseWords = []string{
		"oye", "arre", "arey", "yaar", "accha", "acha", "achha", "chalo", "dekho", "suno", "na", "dis", "mira",
		"oiga", "pues", "bueno", "alors", "bah", "ben", "eh", "e", "aí", "então", "olha", "also", "sag", "hör", "слушай",
		"слушайте", "ну", "так", "嘿", "喂", "那", "ねえ", "ねえねえ", "あの", "ほら",
	}
	// intlAboutWords after a sentence-initial name make a statement about
	// it: copulas, auxiliaries, common adverbs and particles ("banter ist
	// langsam", "banter es lento", "banter такой медленный", "banter
	// bahut slow hai").
	intlAboutWords = []string{
		// German
		"ist", "war", "hat", "hatte", "wird", "sagt", "sagte", "meint", "macht", "nervt", "kann", "schon", "immer",
		"wieder", "heute", "echt", "nicht", "auch", "spinnt", "läuft",
		// Spanish, Portuguese, Italian
		"es", "está", "esta", "estaba", "era", "fue", "siempre", "nunca", "dice", "dijo", "tiene", "hoy", "también",
		"muy", "sigue", "é", "tá", "estava", "foi", "sempre", "disse", "ainda", "hoje", "è",
		// French
		"est", "était", "a", "fait", "dit", "toujours", "encore", "jamais", "aussi", "n'est", "c'est",
		// Hindi (romanised)
		"hai", "tha", "thi", "bahut", "ka", "ki", "ke", "ko", "phir", "bhi", "toh", "hamesha", "kabhi", "aaj",
		// Russian
		"такой", "такая", "очень", "опять", "снова", "всегда", "сегодня", "уже", "был", "была", "не", "тоже",
		"просто", "реально", "вообще", "сломался", "тупит",
	}
	// intlTailWords may trail a vocative ("banter bhai", "banter yaar").
	intlTailWords = []string{"bhai", "yaar", "ji", "na", "bitte", "stp", "svp"}
	// intlEnderWords close a clause, as "here" and "now" do.
	intlEnderWords = []string{"facts", "gg", "gj", "wp", "nvm", "nah"}
	// intlAdjWords modify a noun: "peak banter", "absolute bants".
	intlAdjWords = []string{"peak", "absolute", "low", "high", "utter", "total", "elite", "prime", "premium",
		"vintage", "top-tier", "unmatched", "legendary", "certified", "proper"}
	// commandWords take the name as an argument in a shell command or a
	// chat command: "systemctl restart banter", "docker logs banter".
	commandWords = []string{"grep", "systemctl", "docker", "kubectl", "sudo", "cat", "ls", "cd", "logs", "exec",
		"journalctl", "git", "pkill", "curl", "ssh", "tail", "run", "rerun", "deploy", "launch", "compile", "rebuild"}
	// indefiniteWords open a sentence that asks the room, not the bot: a
	// name later in it is an object ("anyone know why banter stopped",
	// "кто-то сломал banter?").
	indefiniteWords = []string{"anyone", "anybody", "someone", "somebody", "nobody", "кто", "alguien", "jemand", "quelqu'un", "alguém", "koi", "qualcuno"}
)

// cjkStatement reports whether a Chinese or Japanese word right after a
// sentence-initial name makes a statement about it: an adverb, copula or
// particle ("banter 很慢", "banter 又坏了", "banter は遅い", "banter って").
func cjkStatement(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	switch r {
	case '很', '又', '今', '太', '真', '也', '是', '不', '总', '老', '好', '在', '有', '说', '的', '还', '挺', '特',
		'は', 'が', 'の', 'も', 'を', 'っ', 'と', 'て', 'ま', 'ほ', 'す', 'め':
		return true
	}
	return false
}
