#!/usr/bin/env python3
"""Writes the "people" addressing corpus (issue 38): turns written the way people
really write and talk to a bot named "banter" (alias "bant"), each labelled by what a
person in the channel would judge, with its kind ("why").

    python3 decision/replay/testdata/people/make_corpus.py

writes people.jsonl (everything), dev.jsonl and test.jsonl next to this file. The split
is deterministic: a turn goes to the test part when the first byte of the SHA-256 of its
id is odd. Context lines a turn needs (the bot's message it replies to, a member who
spoke first) travel with it into its part and carry no label.

The labels were written with the sentences, before the matcher was tuned on the dev
part; the test part is only scored, never tuned on.
"""
import hashlib
import json
import os

BOT_ID = "900000000000000001"
BOT_MENTION = "<@" + BOT_ID + ">"
MIKE_MENTION = "<@300000000000000003>"
SAM_MENTION = "<@300000000000000007>"

A, N = True, False  # addressed, not addressed

# ---------------------------------------------------------------------------
# Kinds. Each list holds (text, addressed). "both" lists are used as chat
# messages and, lower-cased with most punctuation dropped, as voice transcripts.
# ---------------------------------------------------------------------------

TYPO_FRAMES_ADDR = [
    "{n}, what's the weather tomorrow?",
    "hey {n} can you set a timer for 10 min",
    "{n} you there?",
    "thanks {n}!",
    "ok {n}, tell me a joke",
    "yo {n} who won the game last night",
    "{n}!! help me with this sum: 17*23",
    "good morning {n}",
    "{n} what do you think of my plan",
    "lol nice one {n}",
]
TYPO_NAMES = ["banterrr", "bantr", "baanter", "bnater", "banetr", "banteer", "bannter", "bantter",
              "banterr", "banteeer", "bnter", "bantre", "BANTERRRR", "Banterrrr", "baaaanter"]
TYPO_NOT = [
    ("the banner on the homepage is broken again", N),
    ("we could barter for it at the market", N),
    ("he works as a banker now", N),
    ("that batter was amazing in the final over", N),
    ("hey banner guy, can you fix the header image", N),
    ("bantr is so slow today", N),
    ("honestly banterrr has been weird all week", N),
    ("i think baanter broke again", N),
    ("does anyone else find bnater laggy", N),
    ("my bantr game is weak today lol", N),
    ("the banger of the night was that remix", N),
    ("hey banger, love that track", N),
    ("the butter ran out again", N),
    ("better luck next time mike", N),
    ("bantry bay is lovely in summer", N),
    ("barter system when", N),
    ("banner, flag, logo: all done", N),
    ("ugh the baanter bot is down", N),
]

NAME_END = [
    ("fair enough banter", A), ("sounds good banter", A), ("makes sense banter", A),
    ("nah i'm good banter", A), ("ok cool banter", A), ("love you banter", A),
    ("that was hilarious banter", A), ("good night banter", A), ("see you tomorrow banter", A),
    ("not now banter", A), ("you're right banter", A), ("spot on banter", A),
    ("fair point banter", A), ("way ahead of you banter", A), ("well played banter", A),
    ("no worries banter", A), ("all good banter", A), ("got it banter", A),
    ("i owe you one banter", A), ("wrong again banter", A), ("too slow banter", A),
    ("you tell them banter", A), ("big facts banter", A), ("same here banter", A),
    ("try again banter", A), ("exactly my point banter", A), ("cheers for that banter", A),
    ("appreciate it banter", A), ("good to know banter", A), ("tell me more banter", A),
    ("i love a bit of banter", N), ("that's just friendly banter", N), ("no more banter", N),
    ("it was all just banter", N), ("we need less banter", N), ("this channel is full of banter", N),
    ("keep the banter going", N), ("that's top tier banter", N), ("nothing beats friday banter", N),
    ("enough with the banter", N), ("i miss the old banter", N), ("quality banter", N),
    ("cut the banter", N), ("too much banter", N), ("pub banter", N),
]

COMPOUND = [
    ("banterbot, what's 15% of 80?", A), ("hey banterbot", A), ("BanterBot what time is it in Tokyo", A),
    ("banter-bot can you summarise this thread", A), ("thanks banter-bot", A), ("banter_bot you there?", A),
    ("yo banterbot play some lofi", A), ("ok banterbot, remind me at 5", A), ("Banter-Bot, help", A),
    ("good morning banterbot!", A), ("banterbot tell me a fun fact", A), ("hi banter bot, how are you", A),
    ("banter bot what's the capital of peru", A), ("nice one banterbot", A), ("banterbot?", A),
    ("banterbot is down again", N), ("who set up banterbot in this server", N),
    ("i think banter-bot is lagging", N), ("banter-bot's jokes are getting worse", N),
    ("can someone restart banterbot", N), ("the banterbot logs are huge", N),
    ("banterbot has been quiet all day", N), ("did anyone invite banter-bot to the new server", N),
    ("banter bot keeps repeating itself", N), ("i muted banterbot for an hour", N),
]

LANG_OPENER = [
    ("hola banter, ¿qué tal?", A), ("oye banter, ¿qué hora es en Madrid?", A), ("hola banter cuéntame un chiste", A),
    ("oye banter ayúdame con esto", A), ("buenas banter, ¿cómo va?", A), ("gracias banter!", A),
    ("namaste banter", A), ("arre banter, ye kya hai", A), ("banter bhai, ek joke sunao", A),
    ("yaar banter batao na aaj ka weather", A), ("arre banter sun na", A), ("banter, kya haal hai?", A),
    ("hallo banter, wie spät ist es?", A), ("hey banter, wie geht's?", A), ("danke banter", A),
    ("moin banter, was geht", A), ("na banter, alles klar?", A), ("servus banter", A),
    ("salut banter, ça va ?", A), ("coucou banter, tu peux m'aider ?", A), ("merci banter !", A),
    ("bonjour banter, quelle heure est-il ?", A), ("dis banter, c'est quoi la capitale du Pérou ?", A),
    ("olá banter, tudo bem?", A), ("oi banter, que horas são?", A), ("obrigado banter", A),
    ("e aí banter, beleza?", A), ("ei banter, me ajuda aqui", A),
    ("привет banter, как дела?", A), ("banter, привет!", A), ("спасибо banter", A), ("слушай banter, который час?", A),
    ("你好 banter", A), ("banter 你好，今天天气怎么样？", A), ("嘿 banter，讲个笑话", A), ("谢谢 banter", A),
    ("ねえ banter、今何時？", A), ("banter、ありがとう", A), ("こんにちは banter", A), ("ねえねえ banter 助けて", A),
    ("ciao banter, come va?", A), ("hej banter, hur mår du?", A), ("merhaba banter", A),
    ("hola chicos, ¿quién juega hoy?", N), ("namaste everyone", N), ("hallo zusammen, wer ist online?", N),
    ("salut tout le monde", N), ("olá pessoal", N), ("привет всем", N), ("大家好", N), ("みんな、おはよう", N),
    ("arre yaar, kal milte hain", N), ("oye mike, ¿vienes?", N), ("hola mike, ¿qué tal?", N),
]

LANG_ABOUT = [
    ("banter ist heute so langsam", N), ("banter ist echt witzig", N), ("ich glaube banter ist kaputt", N),
    ("banter hat wieder Unsinn erzählt", N), ("der bot ist heute langsam", N),
    ("banter es muy lento hoy", N), ("banter está roto otra vez", N), ("creo que banter no funciona", N),
    ("banter siempre dice tonterías", N), ("el bot está caído", N),
    ("banter 很慢", N), ("banter 今天好慢啊", N), ("banter 又坏了", N), ("我觉得 banter 很好笑", N), ("这个机器人太慢了", N),
    ("banter такой медленный сегодня", N), ("banter опять тупит", N), ("мне кажется banter сломался", N),
    ("banter очень смешной", N), ("бот сегодня тормозит", N),
    ("banter est lent aujourd'hui", N), ("banter est encore cassé", N), ("je crois que banter a planté", N),
    ("le bot est trop drôle", N), ("banter tá lento hoje", N), ("banter está travado de novo", N),
    ("acho que o banter caiu", N), ("o bot é muito engraçado", N),
    ("banter bahut slow hai aaj", N), ("banter ka jawab galat tha", N), ("yaar banter phir se hang ho gaya", N),
    ("banter は遅い", N), ("banter が壊れた", N), ("banter って面白いね", N), ("このボット遅いな", N),
    ("banter è lentissimo oggi", N),
    ("banter, ist das richtig?", A), ("banter, ¿es verdad?", A), ("banter, это правда?", A), ("banter, c'est vrai ?", A),
    ("banter, isso é verdade?", A), ("banter 这是真的吗？", A), ("banter, sach mein?", A), ("banter、本当？", A),
]

THIRD_EN = [
    ("banter is slow today", N), ("banter was wrong about the score", N), ("banter keeps timing out", N),
    ("the bot is lagging again", N), ("is banter down for anyone else?", N), ("why is banter so slow today", N),
    ("has anyone noticed banter repeating itself", N), ("i asked banter and it said no", N),
    ("banter literally roasted mike", N), ("banter's voice sounds different", N),
    ("banter seems off today", N), ("banter has a new voice", N), ("the bot just ignored me", N),
    ("banter got the answer wrong again", N), ("apparently banter can sing now", N), ("banter gets smarter every week", N),
    ("banter, why are you so slow today", A), ("banter are you ok? you're slow", A), ("banter you're lagging", A),
]

REPLY_OTHER = [  # replies to one of the bot's messages (text)
    ("look, even the bot agrees with me", N), ("see mike, the bot says you're wrong", N),
    (MIKE_MENTION + " told you so", N), ("haha " + SAM_MENTION + " it roasted you", N),
    ("mike, read this", N), ("sam look what the bot said lol", N), ("the bot gets it, why don't you mike", N),
    ("even banter knows that one priya", N), ("lmao the bot just ended you " + MIKE_MENTION, N),
    ("screenshotting this for the group chat", N), ("@mike see?", N), ("guys the bot is right", N),
    ("priya this is exactly what i meant", N), ("this bot is unhinged lol", N), ("banter is so right here", N),
    ("mira mike, hasta el bot está de acuerdo", N), ("siehst du sam, sogar der bot sagt das", N),
    ("tom, even the bot thinks you're wrong", N), (SAM_MENTION + " proof", N), ("the bot said it not me", N),
    ("thanks!", A), ("can you explain that again?", A), ("lol good one", A), ("wait what do you mean", A),
    ("that's wrong, it was 1998", A), ("more please", A), ("and in celsius?", A), ("who told you that?", A),
    ("ok but why", A), ("nice, now do one about cats", A), ("haha love it", A), ("are you sure?", A),
    ("that's not what i asked", A), ("perfect, thanks", A), ("gracias!", A), ("danke dir", A),
    ("lol mike look at this", N), ("saving this one for later", N), ("sam it's talking about you", N),
    ("ok the bot has a point", N), ("@sam you owe me now", N), ("even banter agrees lmao", N),
    ("priya, you were right", N), ("this is why i keep the bot around", N), ("mike ur cooked", N),
    ("можешь прочитать это, миша", N), ("sam regarde ce que le bot a dit", N), ("the bot is trolling you sam", N),
    ("can you make it shorter", A), ("you're funny", A), ("tell mike that too", A), ("mike would love this, can you send it to him?", A),
]

MENTION = [  # the bot's own mention markup in the text (mentions_bot true)
    ("why is " + BOT_MENTION + " so slow today", N), ("has anyone else noticed " + BOT_MENTION + " repeating itself", N),
    ("i think " + BOT_MENTION + " is broken again", N), ("who added " + BOT_MENTION + " to this server", N),
    (BOT_MENTION + " is down again", N), ("lol " + BOT_MENTION + " just roasted mike", N),
    ("can someone restart " + BOT_MENTION + "?", N), ("i love how " + BOT_MENTION + " answers", N),
    ("ist " + BOT_MENTION + " heute kaputt?", N), (BOT_MENTION + " es muy lento hoy", N),
    ("anyone know why " + BOT_MENTION + " stopped answering", N), ("i muted " + BOT_MENTION + " for now", N),
    ("mike, " + BOT_MENTION + " is so funny today", N), (BOT_MENTION + " ist heute so langsam", N),
    (BOT_MENTION + " 今天好慢", N), ("кто-то сломал " + BOT_MENTION + "?", N), ("honestly " + BOT_MENTION + " has been great", N),
    (BOT_MENTION + " what's the weather", A), (BOT_MENTION + ", ¿qué hora es?", A), ("yo " + BOT_MENTION + " play lofi", A), ("thanks " + BOT_MENTION, A), ("hey " + BOT_MENTION + " you there?", A),
    (BOT_MENTION + " tell me a joke", A), (BOT_MENTION, A), ("what do you think " + BOT_MENTION + "?", A),
    (BOT_MENTION + " can you summarise the last 20 messages", A), ("hola " + BOT_MENTION + ", ¿qué tal?", A),
    (BOT_MENTION + " why are you so slow today?", A), ("ok " + BOT_MENTION + " settle this: pineapple on pizza?", A),
]

WORD_USE = [
    ("peak banter", N), ("absolute bants", N), ("top bants", N), ("the banter in here is elite", N),
    ("that's peak banter right there", N), ("absolute banter mate", N), ("bants were top tier tonight", N),
    ("it was just bants", N), ("all bants no substance", N), ("what a bant", N), ("bant of the year", N),
    ("the bants are flowing", N), ("quality bants lads", N), ("lol the banter today", N),
    ("banter of the century", N), ("some good old banter", N), ("friday night bants", N),
    ("that's banter for you", N), ("just a bit of bant", N), ("low key banter", N),
    ("the banter was unmatched", N), ("pure banter", N), ("banter aside, who's driving?", N),
    ("i'm here for the bants", N), ("banter levels are off the charts", N),
    ("bant, what's the time?", A), ("hey bant", A), ("thanks bant", A), ("bant you there?", A), ("yo bant, play something", A),
]

CODE = [
    ("run `banter replay -labels corpus.jsonl` and paste the output", N), ("the config is in ~/banter/config.yaml", N),
    ("type \"banter help\" in the channel to see the commands", N), ("cd /opt/banter && make run", N),
    ("```\nbanter replay -config x.yaml\n```", N), ("check banter.yaml line 12", N),
    ("try `banter, tell me a joke` as the first message", N), ("the binary is bin/banter", N),
    ("just run banter replay on it", N), ("set BANTER_CONFIG=./banter.yaml first", N),
    ("she wrote 'banter, stop' in the channel lol", N), ("pip install banter-cli? no, it's a go binary", N),
    ("grep banter logs.txt", N), ("systemctl restart banter", N), ("the banter.service unit failed", N),
    ("docker logs banter | tail", N), ("`banter` is the container name", N), ("import \"github.com/banterbot/banter/decision\"", N),
    ("banter replay -labels dev.jsonl gives 0.9", N), ("./banter run --config prod.yaml", N),
    ("the logs say banter: connection refused", N), ("open banter/decision/namematch.go", N),
    ("did you push the banter-v2 tag?", N), ("'banter stop' was the command", N), ("the bot responds to \"hey banter\"", N),
    ("`hey banter` is the wake word", N), ("banter --version prints 1.4", N), ("https://github.com/banterbot/banter", N),
    ("banter, what does `make bench` do?", A), ("banter can you explain this error: `open banter.yaml: no such file`", A),
    ("hey banter, is `banter replay` deterministic?", A), ("banter: why does ~/banter/config.yaml get ignored?", A),
]

MEMBER = [  # members whose name contains the bot's; the member speaks first (context line)
    ("Bantersaurus", "bantersaurus you coming tonight?", N), ("Bantersaurus", "gg bantersaurus", N),
    ("banter_bob", "banter_bob, your turn", N), ("banter_bob", "hey banter_bob", N),
    ("BanterBob", "banterbob what's your steam name", N), ("BanterBob", "thanks banterbob!", N),
    ("Banterella", "banterella did you finish the map", N), ("Banterella", "lol banterella", N),
    ("Banter Bob", "banter bob are you on tonight?", N), ("Banter Bob", "hey banter bob, gg", N),
    ("Bantry", "bantry, pass me the link", N), ("Bantry", "hey bantry", N),
    ("xXBanterXx", "xxbanterxx nice shot", N), ("MrBanter", "mrbanter you're up", N),
    ("Bantersaurus", "banter, did bantersaurus win?", A), ("banter_bob", "banter what did banter_bob say earlier", A),
]

PLAIN = [
    ("banter, what's the weather in Lisbon tomorrow?", A), ("hey banter tell us a joke", A), ("banter can you hear me", A),
    ("thanks banter", A), ("what do you think, banter?", A), ("banter play some music", A), ("ok banter settle this", A),
    ("banter, is 91 prime?", A), ("good night banter", A), ("yo banter", A), ("banter help", A), ("banter?", A),
    ("hey banter, who won the 2010 world cup", A), ("can you set a reminder banter", A), ("banter what's 12 times 14", A),
    ("banter how far is the moon", A), ("morning banter!", A), ("banter you awake", A), ("banter: translate 'cat' to german", A),
    ("banter, roll a d20", A),
    ("anyone up for games tonight?", N), ("i'm making pasta", N), ("mike did you get the tickets", N),
    ("lol", N), ("brb", N), ("who's hosting friday", N), ("that movie was so bad", N), ("sam you're muted", N),
    ("we should play among us", N), ("the raid starts at 9", N), ("i asked banter yesterday about it", N),
    ("banter told me the answer was 42", N), ("is it raining there?", N), ("priya, can you hear me?", N),
    ("good morning everyone", N), ("what time is it?", N), ("gg", N), ("i love this song", N),
    ("tom what do you think", N), ("can someone share the link", N),
]


MIXED = [  # mixed-language chat, with and without the bot
    ("banter, mañana hay partido?", A), ("banter bhai kal ka match kab hai", A), ("banter, c'est quoi le score?", A),
    ("banter ek kaam karo, remind me at 6", A), ("yaar banter, what's 15 percent of 200", A), ("banter, was heißt 'cat' auf Deutsch?", A),
    ("banter, как сказать 'thank you' по-японски?", A), ("banter, 这个用英语怎么说？", A), ("banter、これ英語で何？", A),
    ("hey banter, qual é a capital da Austrália?", A), ("oye banter, what's the score", A), ("arre banter, tell me a joke yaar", A),
    ("chalo banter, gaana bajao", A), ("banter por favor, pon música", A), ("bitte banter, spiel was", A),
    ("s'il te plaît banter, une blague", A), ("banter пожалуйста, включи музыку", A), ("banter 请放首歌", A),
    ("kal party hai kya guys", N), ("mañana vamos al cine?", N), ("c'est trop bien ce jeu", N), ("das ist so lustig", N),
    ("yaar this game is too good", N), ("alguien juega hoy?", N), ("кто сегодня играет?", N), ("今晚谁玩游戏？", N),
    ("今日は誰がやる？", N), ("bora jogar hoje?", N), ("mike, tu viens ce soir?", N), ("sam bhai, kahan ho?", N),
    ("priya, ¿tienes el link?", N), ("tom, hast du zeit?", N), ("lol kya scene hai", N), ("jajaja qué risa", N),
    ("mdr trop drôle", N), ("kkkkk que isso", N), ("hahaha genau", N), ("ахаха жиза", N),
    ("meine banter-Skills sind schlecht", N), ("el banter de anoche fue épico", N), ("le banter entre eux est drôle", N),
    ("bohot achha banter tha kal", N),
]
PLAIN2 = [
    ("who's bringing snacks", N), ("my internet is so slow", N), ("did you see the trailer", N), ("gg wp", N),
    ("one more game?", N), ("i'm off to bed, night all", N), ("that boss fight was brutal", N), ("can you guys hear me", N),
    ("mike you there?", N), ("sam, stop spamming", N), ("i'll be on at 8", N), ("nah i'm done for today", N),
    ("what did the teacher say", N), ("is the server down?", N), ("pizza or tacos", N), ("heading out, see ya", N),
    ("priya what's your score", N), ("that's hilarious", N), ("omg same", N), ("where's everyone", N),
    ("the update broke my mods", N), ("how was the concert", N), ("i can't find my headset", N), ("tom owes me 5 bucks", N),
    ("we need a fifth player", N), ("can anyone help me with my homework", N), ("thanks guys", N), ("hey everyone", N),
    ("morning all", N), ("what's the plan", N), ("banter knows everything lol", N), ("we could ask banter", N),
    ("maybe banter can help, idk", N), ("should we ask banter?", N), ("banter would know", N),
    ("anyone tried asking banter", N), ("i'll ask banter later", N), ("banter said it's going to rain", N),
    ("banter, you know the answer?", A), ("banter do you know", A), ("banter, settle this please", A), ("quick question banter", A),
    ("banter what's the plan", A), ("banter, you awake?", A), ("hey banter how's your day", A), ("banter how do i fix my mods", A),
    ("can you help me banter", A), ("banter, rate my setup", A), ("any ideas banter?", A), ("banter, who's right, me or mike?", A),
]

# Voice-only kinds.
VOICE_A_HEY = [
    ("a banter what time is it", A), ("a banter can you hear me", A), ("ay banter", A), ("a banter tell me a joke", A),
    ("hey banter what's the weather", A), ("ay banter you there", A), ("a banter play some music", A), ("a banter", A),
    ("eh banter what's up", A), ("ey banter how's it going", A), ("a banter set a timer for five minutes", A),
    ("hay banter who won the game", A), ("ay yo banter", A), ("a banter, what's two plus two", A), ("ey banter help me out", A),
    ("a banter what's the score", A), ("ay banter good morning", A), ("a banter how do you say hello in french", A),
    ("ey banter, are you listening", A), ("a bant what time is it", A), ("ay bant play the next song", A),
    ("a banner what time is it", A), ("ay banta you there", A),
    ("i had a banter with my boss", N), ("a banter free zone please", N), ("hey it's just a banter", N),
    ("that's a banter thing i guess", N), ("it was a banter night", N), ("a banter session with the lads", N),
    ("a lot of banter tonight", N), ("a bit of banter never hurt", N), ("what a banter that was", N),
]
VOICE_CUT = [
    ("ter what time is it", A), ("ter, what's the weather", A), ("nter can you hear me", A), ("anter play some music", A),
    ("ter tell me a joke", A), ("nter what's two plus two", A), ("anter, you there", A), ("ter set a timer", A),
    ("ter can you help me", A), ("nter, who won last night", A), ("anter what do you think", A), ("ter how are you", A),
    ("ter, remind me at six", A), ("nter can you repeat that", A), ("anter what's the capital of peru", A),
    ("ter please stop", A), ("nter, good morning", A),
    ("ter dinner we can play", N), ("ter that i'm going to bed", N), ("nter your password", N),
    ("ter that we went home", N), ("ter all that it was fine", N), ("nter the code again", N), ("ter the game we got pizza", N),
    ("ter lunch i'll call you", N), ("nter the room and sit down", N),
]
VOICE_FILLER = [
    ("banter um what's the uh weather", A), ("banter uh can you hear me", A), ("hey uh banter what time is it", A),
    ("banter like um tell me a joke", A), ("um banter you there", A), ("so uh banter how far is the moon", A),
    ("banter er what's the score", A), ("uh hey banter um play something", A), ("banter you know what i mean right", A),
    ("hmm banter what do you think", A), ("banter uh uh set a timer", A), ("like banter can you like help", A),
    ("um so banter is um slow today", N), ("uh the banter was uh great", N), ("like banter is like broken", N),
    ("um i asked banter uh yesterday", N), ("uh banter uh what's uh the time", A), ("banter hmm um never mind", A),
    ("ok um banter can you um repeat that", A), ("er the uh banter bot is down", N), ("you know banter is um fine", N),
    ("banter so um like what's the plan", A),
]
VOICE_MEMBERS = [  # (member, line by someone else, addressed)
    ("Bantry", "hey bantry you coming", N), ("Bantry", "bantry what do you think", N), ("Banta", "banta can you hear me", N),
    ("Banta", "hey banta", N), ("Bender", "hey bender what's up", N), ("Bender", "bender you there", N),
]


def voiceify(s):
    """A transcript the way a recognizer writes it: lower case, most punctuation gone."""
    out = s.lower()
    for ch in "!¡¿\"`*":
        out = out.replace(ch, "")
    return " ".join(out.split())


class Writer:
    def __init__(self):
        self.lines = []  # (part_key, [events])
        self.seq = {}
        self.minute = 0

    def ts(self):
        self.minute += 1
        h, m = divmod(self.minute, 60)
        d, h = divmod(h, 24)
        return "2026-11-%02dT%02d:%02d:00Z" % (23 + d, h, m)

    def next_id(self, prefix):
        self.seq[prefix] = self.seq.get(prefix, 0) + 1
        return "%s%04d" % (prefix, self.seq[prefix])

    def text(self, kind, content, addressed, author="mike", author_id="300000000000000003", reply_to_bot=False,
             mentions_bot=False, member=None):
        events = []
        ch = "c-people"
        if member:
            events.append({"type": "message", "id": self.next_id("ctx-"), "channel_id": ch,
                           "author_id": "300000000000000099", "author_name": member, "content": "hey all", "ts": self.ts()})
        tid = self.next_id("pt-")
        if reply_to_bot:
            bid = self.next_id("bot-")
            events.append({"type": "message", "id": bid, "channel_id": ch, "author_id": BOT_ID, "author_name": "banter",
                           "is_self": True, "content": "Pineapple on pizza is a perfectly valid choice.", "ts": self.ts()})
        ev = {"type": "message", "id": tid, "channel_id": ch, "author_id": author_id, "author_name": author,
              "content": content, "ts": self.ts(), "addressed": addressed, "why": kind}
        if mentions_bot:
            ev["mentions_bot"] = True
        if reply_to_bot:
            ev["reply_to"] = bid
        events.append(ev)
        self.lines.append((tid, events))

    def voice(self, kind, transcript, addressed, speaker="priya", speaker_id="300000000000000004", member=None):
        events = []
        # Each voice turn gets its own channel so no follow-up or focus carries over.
        tid = self.next_id("pv-")
        ch = "vc-" + tid
        if member:
            events.append({"type": "voice", "id": self.next_id("ctxv-"), "channel_id": ch,
                           "speaker_id": "300000000000000098", "speaker_name": member, "transcript": "hi everyone",
                           "duration_ms": 900, "ts": self.ts()})
        events.append({"type": "voice", "id": tid, "channel_id": ch, "speaker_id": speaker_id, "speaker_name": speaker,
                       "transcript": transcript, "duration_ms": 1500, "ts": self.ts(),
                       "addressed": addressed, "why": kind})
        self.lines.append((tid, events))


def build():
    w = Writer()
    has_markup = lambda s: "<@" in s or "`" in s or "/" in s or "~" in s
    both = [("name_end", NAME_END), ("compound", COMPOUND), ("lang_opener", LANG_OPENER),
            ("lang_about", LANG_ABOUT), ("third_person", THIRD_EN), ("word_use", WORD_USE),
            ("plain", PLAIN), ("plain", PLAIN2), ("mixed", MIXED), ("typo_not", TYPO_NOT)]
    for kind, items in both:
        for text, label in items:
            w.text(kind, text, label)
            if not has_markup(text):
                w.voice(kind, voiceify(text), label)
    for frame in TYPO_FRAMES_ADDR:
        for i, name in enumerate(TYPO_NAMES):
            # every frame with every third name, rotating, in text; voice hears elongations only
            if (i + TYPO_FRAMES_ADDR.index(frame)) % 3 == 0:
                w.text("typo", frame.format(n=name), A)
    for frame in TYPO_FRAMES_ADDR:
        for name in ["banterrr", "baanter", "banteer", "bannter"]:
            if hash_bit(frame + name):
                w.voice("typo", voiceify(frame.format(n=name)), A)
    for text, label in CODE:
        w.text("code", text, label)
    for text, label in REPLY_OTHER:
        w.text("reply_other" if not label else "reply_bot", text, label, reply_to_bot=True)
    for text, label in MENTION:
        w.text("mention_about" if not label else "mention", text, label, mentions_bot=True)
    for member, text, label in MEMBER:
        w.text("member_name", text, label, member=member)
        w.voice("member_name", voiceify(text), label, member=member)
    for member, text, label in VOICE_MEMBERS:
        w.voice("member_name", text, label, member=member)
    for kind, items in [("voice_a_hey", VOICE_A_HEY), ("voice_cut", VOICE_CUT), ("filler", VOICE_FILLER)]:
        for text, label in items:
            w.voice(kind, text, label)
    return w


def hash_bit(s):
    return hashlib.sha256(s.encode()).digest()[0] & 1 == 1


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    w = build()
    header = {"type": "bot", "name": "banter", "aliases": ["bant"]}
    parts = {"people.jsonl": [], "dev.jsonl": [], "test.jsonl": []}
    for tid, events in w.lines:
        part = "test.jsonl" if hash_bit(tid) else "dev.jsonl"
        parts["people.jsonl"].extend(events)
        parts[part].extend(events)
    for name, events in parts.items():
        with open(os.path.join(here, name), "w", encoding="utf-8") as f:
            f.write(json.dumps(header) + "\n")
            for e in events:
                f.write(json.dumps(e, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
