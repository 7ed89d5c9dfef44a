-- 007: a conversation created without a title is titled from its first question; one the reader named
-- keeps its name, whatever it is (even "Untitled"). Existing conversations with the placeholder title
-- and no turns yet keep being titled automatically.

ALTER TABLE conversations ADD COLUMN auto_title INTEGER NOT NULL DEFAULT 0 CHECK (auto_title IN (0, 1));

UPDATE conversations SET auto_title = 1
WHERE title = 'New conversation'
  AND NOT EXISTS (SELECT 1 FROM chat_messages m WHERE m.conversation_id = conversations.id);
