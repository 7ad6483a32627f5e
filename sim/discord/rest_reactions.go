package discordsim

import (
	"net/http"

	"github.com/banterbot/banter/sim/discord/world"
)

// Reaction routes. The emoji is a URL-encoded Unicode emoji or name:id.
// https://discord.com/developers/docs/resources/message#create-reaction

// Reaction routes, as rate limits and faults name them.
const (
	RouteReactionAdd    Route = "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me"
	RouteReactionRemove Route = "DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me"
)

func (a *restAPI) reactionRoutes(add func(Route, routeOpts, apiFunc)) {
	ch := routeOpts{major: "channel_id"}
	base := "/channels/{channel_id}/messages/{message_id}/reactions"
	add(RouteReactionAdd, ch, a.putReaction)
	add(RouteReactionRemove, ch, a.deleteOwnReaction)
	add(Route("DELETE "+base+"/{emoji_name}/{user_id}"), ch, a.deleteUserReaction)
	add(Route("GET "+base+"/{emoji_name}"), ch, a.listReactionUsers)
	add(Route("DELETE "+base+"/{emoji_name}"), ch, a.clearEmojiReactions)
	add(Route("DELETE "+base), ch, a.clearReactions)
}

// reactionPath reads the channel, message and emoji path values.
func reactionPath(q *apiRequest) (ChannelID, MessageID, world.Emoji, error) {
	e, err := world.ParseEmoji(q.PathValue("emoji_name"))
	return ChannelID(q.PathValue("channel_id")), MessageID(q.PathValue("message_id")), e, err
}

func noContent(err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (a *restAPI) putReaction(q *apiRequest) (int, any, error) {
	ch, id, e, err := reactionPath(q)
	if err != nil {
		return 0, nil, err
	}
	return noContent(a.world.AddReaction(ch, id, q.user, e))
}

func (a *restAPI) deleteOwnReaction(q *apiRequest) (int, any, error) {
	ch, id, e, err := reactionPath(q)
	if err != nil {
		return 0, nil, err
	}
	return noContent(a.world.RemoveReaction(ch, id, q.user, q.user, e))
}

func (a *restAPI) deleteUserReaction(q *apiRequest) (int, any, error) {
	ch, id, e, err := reactionPath(q)
	if err != nil {
		return 0, nil, err
	}
	return noContent(a.world.RemoveReaction(ch, id, q.user, UserID(q.PathValue("user_id")), e))
}

// listReactionUsers is GET …/reactions/{emoji}?after=&limit= (1–100,
// default 25): the users who reacted, by id.
func (a *restAPI) listReactionUsers(q *apiRequest) (int, any, error) {
	ch, id, e, err := reactionPath(q)
	if err != nil {
		return 0, nil, err
	}
	limit, err := intParam(q, "limit", 25, 1, 100)
	if err != nil {
		return 0, nil, err
	}
	after, err := snowflakeParam(q, "after")
	if err != nil {
		return 0, nil, err
	}
	users, err := a.world.ReactionUsers(ch, id, q.user, e, UserID(after), limit)
	if err != nil {
		return 0, nil, err
	}
	return a.ok(func(v *world.View) any {
		out := []wireUser{}
		for _, u := range users {
			out = append(out, wireUserOf(v, u))
		}
		return out
	})
}

func (a *restAPI) clearEmojiReactions(q *apiRequest) (int, any, error) {
	ch, id, e, err := reactionPath(q)
	if err != nil {
		return 0, nil, err
	}
	return noContent(a.world.ClearReactions(ch, id, q.user, &e))
}

func (a *restAPI) clearReactions(q *apiRequest) (int, any, error) {
	return noContent(a.world.ClearReactions(ChannelID(q.PathValue("channel_id")), MessageID(q.PathValue("message_id")), q.user, nil))
}
