"""Ports: the interfaces the use cases and the agent depend on, implemented by adapters and by
fakes.

Every port has an in-package fake (``folio.adapters.*.memory`` / ``scripted``) tested against the
same contract tests as the real adapters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

from folio.domain.books import (
    Book,
    BookFormat,
    Chunk,
    ParsedBook,
    ReadingPosition,
    SearchHit,
    StoredSentences,
)
from folio.domain.conversations import ChatMessage, Conversation, Turn
from folio.domain.highlights import Highlight, ImportedHighlight
from folio.domain.jobs import ImportJob
from folio.domain.lexicon import Lexicon
from folio.domain.llm import (
    ChatResponse,
    PromptMessage,
    StreamEvent,
    TokenUsage,
    ToolDefinition,
    ToolInvocation,
)
from folio.domain.search import RankedChunk
from folio.domain.sync import DocumentIds, Fragment, PushedProgress
from folio.domain.users import ResourceKind, User
from folio.domain.window import ReadingWindow

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from folio.domain.passages import FoundBy

    Vectors = npt.NDArray[np.float32]  # shape (n, dimensions), rows L2-normalised
else:

    def __getattr__(name: str) -> object:
        """``Vectors`` at run time (an import of it outside annotations): numpy is imported then,
        not with the ports, so a command that never embeds (``folio books``) does not load it."""
        if name == "Vectors":
            import numpy as np
            import numpy.typing as npt

            globals()["Vectors"] = vectors = npt.NDArray[np.float32]
            return vectors
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- books ----------------------------------------------------------------------------------------
class BookParser(Protocol):
    """Turns a file into a ``ParsedBook``. Raises ``IngestError`` (UNSUPPORTED/CORRUPT/EMPTY)."""

    formats: tuple[BookFormat, ...]

    def parse(self, path: Path) -> ParsedBook: ...


class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    @property
    def relevance_floor(self) -> float:
        """The cosine on this model's scale at or under which a sentence is taken as unrelated to
        a question (each model has its own scale: the offline answer quotes nothing under it)."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Normalised vectors, one row per text, in order."""
        ...


class SentenceVectorSource(Protocol):
    """Where the vectors of the passages' sentences are kept (a ``BookRepository``)."""

    def sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str]
    ) -> dict[str, StoredSentences]: ...


class BookRepository(Protocol):
    def add(
        self,
        book: Book,
        text: str,
        chunks: Sequence[Chunk],
        vectors: Vectors | None = None,
        *,
        lexicon: Lexicon | None = None,
    ) -> None:
        """Store a book, its text and chunks (and their vectors and its lexicon when given) in
        one transaction: all or nothing. Without vectors the book is searchable by keywords at
        once."""
        ...

    def add_vectors(self, book_id: str, chunk_ids: Sequence[str], vectors: Vectors) -> None:
        """Store (or replace) the vectors of some of a stored book's chunks, row i for chunk id
        i, in one transaction. Raises ``BookError(NOT_FOUND)`` when the book is gone."""
        ...

    def chunks_without_vectors(self, book_id: str) -> list[Chunk]:
        """The book's chunks that have no vector yet, in text order."""
        ...

    def add_sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str], vectors: Sequence[Vectors]
    ) -> None:
        """Store (or replace) the vectors of the sentences of some of a stored book's chunks,
        ``vectors[i]`` (one row per sentence, any number of rows) for chunk id i, in one
        transaction; kept at float16 (half the room: cosines move by about 1e-3). An id that is
        not one of the book's chunks is skipped. Raises ``BookError(NOT_FOUND)`` when the book is
        gone, ``ValueError`` when the lengths differ. They go with their chunks (a deleted book,
        a new edition)."""
        ...

    def sentence_vectors(
        self, book_id: str, chunk_ids: Sequence[str]
    ) -> dict[str, StoredSentences]:
        """The stored sentence vectors (float32, C-contiguous) of those of ``chunk_ids`` that
        are the book's and have them, by chunk id, in one read, with where each chunk ends. A
        matrix is returned as stored, in its own width: one made by another embedder is the
        caller's to skip."""
        ...

    def chunks_without_sentence_vectors(self, book_id: str) -> list[Chunk]:
        """The book's chunks that have no sentence vectors yet, in text order."""
        ...

    def get(self, book_id: str) -> Book:
        """Raises ``BookError(NOT_FOUND)``."""
        ...

    def list(self) -> list[Book]: ...

    def find_by_hash(self, content_hash: str) -> Book | None: ...

    def delete(self, book_id: str) -> None:
        """Deletes the book with its chunks, vectors and (by cascade) its conversations."""
        ...

    def get_text(self, book_id: str, start: int = 0, end: int | None = None) -> str: ...

    def set_position(self, book_id: str, position: ReadingPosition) -> Book: ...

    def update_details(self, book_id: str, *, title: str, author: str | None) -> Book:
        """Set the title and author shown for the book (``BookError(NOT_FOUND)``)."""
        ...

    def set_series(self, book_id: str, *, series: str | None, series_index: float | None) -> Book:
        """Set the series the book belongs to and its index in it (``None``: none) as given
        (checked by ``folio.domain.series.series_fields``); ``BookError(NOT_FOUND)``."""
        ...

    def chapter_recap(self, book_id: str, chapter_index: int) -> str | None:
        """A model's recap of a whole chapter kept earlier (None when there is none). Index 0,
        which no chapter has, holds the book's extractive summary (``folio.domain.summary``)."""
        ...

    def save_chapter_recap(self, book_id: str, chapter_index: int, text: str, model: str) -> None:
        """Keep a model's recap of a whole chapter, replacing any earlier one; it goes with the
        book (``BookError(NOT_FOUND)`` for an unknown book)."""
        ...

    def lexicon(self, book_id: str) -> Lexicon | None:
        """The book's stored lexicon (``folio.domain.lexicon``); None when it has none, or one
        of another ``LEXICON_VERSION`` (it is then built again from the text)."""
        ...

    def save_lexicon(self, book_id: str, lexicon: Lexicon) -> None:
        """Keep the book's lexicon, replacing any earlier one; it goes with the book
        (``BookError(NOT_FOUND)`` for an unknown book)."""
        ...


@runtime_checkable
class EditionRepository(Protocol):
    """A ``BookRepository`` that can take a new edition of a stored book (the SQL libraries, the
    in-memory one, and the owner's view of them)."""

    def replace_text(
        self, book: Book, text: str, chunks: Sequence[Chunk], *, lexicon: Lexicon | None = None
    ) -> None:
        """A new edition of a stored book (its file changed): the book's row (same id), text,
        chunks and lexicon replaced in one transaction; its vectors and recaps are dropped (to be
        made again), its conversations, identifiers and owner stay. ``BookError(NOT_FOUND)`` when
        the book is gone, ``IngestError(DUPLICATE)`` when the new content is another book's."""
        ...


class ChunkIndex(Protocol):
    def search(
        self,
        book_id: str,
        query: str,
        query_vector: Sequence[float] | npt.NDArray[np.float32] | None,
        *,
        k: int = 5,
        max_char_offset: int | None = None,
        min_char_offset: int = 0,
    ) -> list[RankedChunk]:
        """Hybrid lexical + vector search within one book. No returned chunk text extends past
        ``max_char_offset``: chunks starting at or after it are excluded and a straddling chunk is
        cut there. Chunks starting before ``min_char_offset`` (front matter the reader has not
        read) are excluded too."""
        ...

    def chunks_between(self, book_id: str, char_start: int, char_end: int) -> list[Chunk]:
        """Chunks overlapping ``[char_start, char_end)``, in order."""
        ...

    def vector_coverage(self, book_id: str) -> tuple[int, int]:
        """(chunks with a vector, all chunks) of the book: equal once embedding has finished.
        Chunks without a vector are found by keywords only."""
        ...


class BookSearcher(Protocol):
    """Search what the reader has read, for the agent and the CLI: embeds the query, runs the
    hybrid index bounded by the reading window (``book``'s own, or ``window`` when it is
    ``book``'s: the earlier volumes of its series included), and returns hits with page labels
    and snippets."""

    def search(
        self, book: Book, query: str, *, k: int = 5, window: ReadingWindow | None = None
    ) -> list[SearchHit]: ...


# --- conversations --------------------------------------------------------------------------------
class ConversationRepository(Protocol):
    def save(self, conversation: Conversation) -> None:
        """Insert or update."""
        ...

    def get(self, conversation_id: str) -> Conversation:
        """Raises ``ConversationError(NOT_FOUND)``."""
        ...

    def get_by_book(self, book_id: str) -> list[Conversation]:
        """Most recent activity first."""
        ...

    def list_all(self) -> list[Conversation]: ...

    def delete(self, conversation_id: str) -> None: ...

    def update_title(self, conversation_id: str, title: str) -> Conversation: ...


class ChatMessageRepository(Protocol):
    def save(self, message: ChatMessage) -> None: ...

    def save_batch(self, messages: Sequence[ChatMessage]) -> None: ...

    def get_by_conversation(self, conversation_id: str) -> list[ChatMessage]:
        """Ordered by (turn_number, seq)."""
        ...

    def delete_by_conversation(self, conversation_id: str) -> None: ...

    def last_turn_number(self, conversation_id: str) -> int:
        """0 when the conversation has no turn yet."""
        ...


class TurnRepository(Protocol):
    def save(self, turn: Turn) -> None:
        """Raises ``ConversationError(CONFLICT)`` when the turn number is taken."""
        ...

    def get_by_conversation(self, conversation_id: str) -> list[Turn]: ...


class ConversationUnitOfWork(Protocol):
    """``with uow: ...; uow.commit()``: everything written inside is stored together or not at all.
    Leaving the block without ``commit()`` (or by an exception) rolls back."""

    @property
    def conversations(self) -> ConversationRepository: ...

    @property
    def messages(self) -> ChatMessageRepository: ...

    @property
    def turns(self) -> TurnRepository: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...


class UnitOfWorkFactory(Protocol):
    """A new unit of work. A writing one (the default) may take the store's write lock on entry,
    so that writers queue instead of failing half-way; ``read_only=True`` promises no write and
    reads beside writers without waiting for them (SQLite's WAL readers, PostgreSQL without row
    locks). Writes go through ``app.writes.write`` (retried as a whole when the store says
    another writer was in the way); reads open ``factory(read_only=True)``."""

    def __call__(self, *, read_only: bool = False) -> ConversationUnitOfWork: ...


# --- LLM ------------------------------------------------------------------------------------------
class ChatProvider(Protocol):
    """A chat model. Providers without tool use raise ``LLMError(UNSUPPORTED_FEATURE)`` from the
    ``*_with_tools`` methods. Streaming methods yield text deltas, then one ``DONE`` event."""

    @property
    def provider_name(self) -> str: ...

    @property
    def model_name(self) -> str: ...

    @property
    def supports_tools(self) -> bool: ...

    def chat(self, messages: Sequence[PromptMessage]) -> ChatResponse: ...

    def chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> ChatResponse: ...

    def stream_chat(self, messages: Sequence[PromptMessage]) -> Iterator[StreamEvent]: ...

    def stream_chat_with_tools(
        self, messages: Sequence[PromptMessage], tools: Sequence[ToolDefinition]
    ) -> Iterator[StreamEvent]: ...


class ProviderWrapper:
    """Base of the wrappers around a ``ChatProvider`` (metering, observing): the name, the model
    and the capabilities are the wrapped provider's; subclasses wrap the calls."""

    def __init__(self, inner: ChatProvider) -> None:
        self.inner = inner

    @property
    def provider_name(self) -> str:
        return self.inner.provider_name

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def supports_tools(self) -> bool:
        return self.inner.supports_tools


Exchange = tuple[str, str | None]  # (user question, assistant answer or None), oldest first


class QueryRewriter(Protocol):
    """Turns a follow-up ("what did he do then?") into a self-contained question using the
    history."""

    def rewrite(self, question: str, history: Sequence[Exchange]) -> str: ...


# --- agent policies ------------------------------------------------------------------------------
# Runs one tool call and returns its tool_result message.
ToolRunner = Callable[[ToolInvocation], PromptMessage]
TextSink = Callable[[str], None]  # receives streamed answer text


@dataclass(frozen=True, slots=True)
class RetrievalOutcome:
    """What a retrieval strategy produced for one turn.

    ``new_messages`` are the messages to store after the user message, in order: assistant messages
    carrying tool calls, their tool_result messages, and the final assistant answer (always last).
    ``llm_calls``/``usage`` count every model call the strategy made (query rewriting included)."""

    answer: str
    new_messages: tuple[PromptMessage, ...]
    llm_calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    model: str | None = None
    queries: tuple[str, ...] = ()
    reasoning_steps: tuple[str, ...] = ()
    strategy: str = ""
    stop_reason: str = "answered"  # answered | max_tool_rounds | repeated_call | small_talk
    # the answer quotes all it uses (offline): its sources are its quotes, none when it has none
    quotes_only: bool = False
    # the passages the answer was drawn from, by the query that found them, in the order the
    # strategy ranked them when it ranks a search's passages again (the offline policy's
    # ``folio.agent.offline.ranking``); the retrieval evaluation scores this order
    evidence: FoundBy = ()


class RetrievalStrategy(Protocol):
    """Runs one turn: decides whether and what to search (through ``run_tool``) and answers.

    ``messages`` is ``[system, ...history window..., user]``. With ``on_text`` the answer is
    streamed to it as it is produced. Raises ``LLMError`` from the provider (``UNSUPPORTED_FEATURE``
    when a tool-using strategy meets a provider without tools: the caller may fall back)."""

    @property
    def name(self) -> str: ...

    def execute(
        self,
        chat_provider: ChatProvider,
        messages: Sequence[PromptMessage],
        tools: Sequence[ToolDefinition],
        run_tool: ToolRunner,
        *,
        on_text: TextSink | None = None,
    ) -> RetrievalOutcome: ...


class ConversationContextStrategy(Protocol):
    """Chooses which stored messages of a conversation (oldest first) go into the prompt."""

    def build_context(
        self, history: Sequence[ChatMessage], *, window: ReadingWindow | None = None
    ) -> list[PromptMessage]:
        """``window``: what the reader has read (None: everything). A turn whose tool results
        held text outside it (the reader moved the position back, a volume left the series)
        goes in without its passages or answer."""
        ...


# --- users and ownership -------------------------------------------------------------------------
class UserRepository(Protocol):
    def add(self, user: User, token_hash: str) -> None:
        """Raises ``UserError(DUPLICATE)`` when the name is taken."""
        ...

    def list(self) -> list[User]: ...

    def get_by_name(self, name: str) -> User:
        """Raises ``UserError(NOT_FOUND)``."""
        ...

    def get_by_token_hash(self, token_hash: str) -> User | None: ...

    def set_token_hash(self, user_id: str, token_hash: str) -> None: ...

    def delete(self, user_id: str) -> None: ...

    def count(self) -> int: ...


class OwnershipRepository(Protocol):
    """Who owns each book and conversation; a resource without a record is the local user's."""

    def set_owner(self, kind: ResourceKind, resource_id: str, user_id: str) -> None: ...

    def owner_of(self, kind: ResourceKind, resource_id: str) -> str: ...

    def owners(self, kind: ResourceKind, resource_ids: Sequence[str]) -> dict[str, str]:
        """The owner of each of ``resource_ids`` (the local user for those without a record)."""
        ...

    def forget(self, kind: ResourceKind, resource_id: str) -> None: ...


class ImportJobRepository(Protocol):
    def save(self, job: ImportJob) -> None:
        """Insert or replace the job."""
        ...

    def get(self, job_id: str) -> ImportJob | None: ...

    def fail_unfinished(self, message: str) -> int:
        """Mark every queued or running job failed (``INTERRUPTED``); returns how many."""
        ...


# --- reading progress synced from e-readers ------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SyncAccount:
    """A user's sync login: the name a device sends and the scrypt hash of the key it sends."""

    user_id: str
    username: str
    key_hash: str


class SyncRepository(Protocol):
    """Sync logins, the document ids of each book's file, and the last push per document."""

    def save_account(self, account: SyncAccount) -> None:
        """Insert or replace the user's login; ``UserError(DUPLICATE)`` when another user has
        the name."""
        ...

    def account(self, username: str) -> SyncAccount | None: ...

    def save_documents(
        self, book_id: str, ids: DocumentIds, fragments: Sequence[Fragment]
    ) -> None: ...

    def books_for_document(self, document: str) -> list[str]:
        """The ids of the books whose file KOReader names ``document`` (either mode)."""
        ...

    def books_for_structure(self, structure_md5: str) -> list[str]:
        """The ids of the EPUBs whose structure digest (``DocumentIds.structure_md5``) this is."""
        ...

    def documents_of(self, book_id: str) -> DocumentIds | None: ...

    def fragments_of(self, book_id: str) -> list[Fragment]: ...

    def save_progress(self, user_id: str, progress: PushedProgress) -> None:
        """Insert or replace the user's last push for ``progress.document``."""
        ...

    def progress(self, user_id: str, document: str) -> PushedProgress | None: ...

    def progress_for_structure(self, user_id: str, structure_md5: str) -> PushedProgress | None:
        """The user's latest push that named this structure digest (a push waiting for the book
        of a re-written copy)."""
        ...


class BookIdentifierRepository(Protocol):
    """A book's identifiers from its source (``isbn``, ``goodreads``..., ``calibre``: the uuid of
    the Calibre book it was imported from); deleted with the book."""

    def set_identifiers(self, book_id: str, identifiers: Mapping[str, str]) -> None:
        """Add or replace these identifiers of the book (others stay)."""
        ...

    def identifiers_of(self, book_id: str) -> dict[str, str]: ...

    def books_with(self, scheme: str, value: str) -> list[str]: ...


class HighlightRepository(Protocol):
    """The reader's imported highlights, per book and owner; deleted with the book."""

    def add(self, highlights: Sequence[Highlight]) -> int:
        """Keep these (one per book, owner and ``key``: an entry kept already is skipped);
        returns how many were new."""
        ...

    def of_book(self, book_id: str, user_id: str) -> list[Highlight]:
        """The owner's highlights of the book, in the book's order (unanchored last)."""
        ...

    def delete(self, book_id: str, user_id: str, highlight_id: str) -> bool:
        """Forget one of the owner's highlights of the book; False when there is none such."""
        ...

    def keep_pending(self, user_id: str, entries: Sequence[ImportedHighlight]) -> int:
        """Keep entries naming a book the owner does not have yet (once per title, author and
        ``key``); returns how many were new."""
        ...

    def pending(self, user_id: str) -> list[ImportedHighlight]:
        """The owner's entries waiting for their book, in the order kept."""
        ...

    def drop_pending(self, user_id: str, entries: Sequence[ImportedHighlight]) -> None:
        """Forget these waiting entries (their book came)."""
        ...
