package io.ductor.test.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The code blocks of the user documentation ({@code README.md} and {@code docs/*.md}),
 * and the tagged regions of the sources the build compiles that show the same code.
 * <p>
 * A region of a Java source is the code between a line {@code // tag::<name>[]} and a
 * line {@code // end::<name>[]}; a Java block of the documentation is checked when it is
 * the code of one region ({@link #sameCode(String, String)}), so the page shows what the
 * build compiles and neither drifts. The blocks between {@code <!-- <marker>:begin -->}
 * and {@code <!-- <marker>:end -->} can be read apart ({@link #between(Path, String)}).
 */
public final class DocSnippets {

	private static final Pattern BLOCK = Pattern.compile("```(\\w+)\\n(.*?)```", Pattern.DOTALL);

	private static final Pattern FENCE = Pattern.compile("( *)```(\\w*)\\s*");

	private static final Pattern CLOSING_FENCE = Pattern.compile(" *```\\s*");

	private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");

	private static final Pattern TAG = Pattern.compile("\\s*// (tag|end)::([\\w.-]+)\\[]\\s*");

	/**
	 * The blocks of the documentation that no test compiles or binds, by
	 * {@link Block#key()}, with the reason. Keep it short: a block belongs here only when
	 * it cannot be code or configuration (pseudo-code, an error shown on purpose).
	 */
	private static final Map<String, String> UNCHECKED = Map.of();

	/** Where a documented block leaves code out: {@code { … }}. */
	public static final String ELISION = "\u2026";

	private DocSnippets() {
	}

	/**
	 * The code blocks between the markers, in order.
	 * @param document the Markdown file
	 * @param marker the marker's name
	 * @return each block's language and text
	 */
	public static List<Snippet> between(Path document, String marker) {
		String page;
		try {
			page = Files.readString(document);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		int begin = page.indexOf("<!-- " + marker + ":begin -->");
		int end = page.indexOf("<!-- " + marker + ":end -->");
		if (begin < 0 || end < begin) {
			throw new IllegalStateException(
					document + " has no section <!-- " + marker + ":begin --> … <!-- " + marker + ":end -->");
		}
		List<Snippet> snippets = new ArrayList<>();
		Matcher block = BLOCK.matcher(page.substring(begin, end));
		while (block.find()) {
			snippets.add(new Snippet(block.group(1), block.group(2)));
		}
		return snippets;
	}

	/**
	 * Fails unless {@code source} holds the code of {@code snippet}: the same tokens in
	 * the same order once comments, blank space and {@code this.} (which the source's
	 * style adds) are left out.
	 * @param snippet a Java block of the documentation
	 * @param source the Java source file that runs it
	 */
	public static void assertRuns(Snippet snippet, Path source) {
		String code;
		try {
			code = Files.readString(source);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		String expected = normalize(snippet.text());
		if (!normalize(code).contains(expected)) {
			throw new AssertionError("The " + snippet.language() + " block of the documentation is not the code of "
					+ source + " any more; change one so that they agree again:\n" + snippet.text());
		}
	}

	/**
	 * The directory of the build that holds {@code README.md}, {@code docs} and the
	 * modules, found from the working directory (a module's, when Maven runs its tests).
	 * @return the project's root directory
	 */
	public static Path root() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs"))
					&& Files.isRegularFile(dir.resolve("pom.xml"))) {
				return dir;
			}
		}
		throw new IllegalStateException("No README.md and docs/ above " + Path.of("").toAbsolutePath());
	}

	/**
	 * Every fenced code block of the user documentation: {@code README.md}, then the
	 * pages of {@code docs/} by name.
	 * @param root the project's root directory
	 * @return the blocks, in the order of the pages and of each page
	 */
	public static List<Block> blocks(Path root) {
		List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
		try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		List<Block> blocks = new ArrayList<>();
		for (Path page : pages) {
			blocks.addAll(blocks(root, page));
		}
		return blocks;
	}

	private static List<Block> blocks(Path root, Path page) {
		List<String> lines = readLines(page);
		String document = root.relativize(page).toString().replace('\\', '/');
		List<Block> blocks = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			Matcher fence = FENCE.matcher(lines.get(i));
			if (!fence.matches()) {
				continue;
			}
			int indent = fence.group(1).length();
			StringBuilder text = new StringBuilder();
			int j = i + 1;
			while (j < lines.size() && !CLOSING_FENCE.matcher(lines.get(j)).matches()) {
				String line = lines.get(j);
				int strip = 0;
				while (strip < indent && strip < line.length() && line.charAt(strip) == ' ') {
					strip++;
				}
				text.append(line.substring(strip)).append('\n');
				j++;
			}
			if (j == lines.size()) {
				throw new IllegalStateException(document + ":" + (i + 1) + " opens a code block that never closes");
			}
			blocks.add(new Block(document, i + 1, fence.group(2), text.toString()));
			i = j;
		}
		return blocks;
	}

	/**
	 * The blocks that no test compiles or binds, with the reason for each.
	 * @return the reasons, by {@link Block#key()}
	 */
	public static Map<String, String> unchecked() {
		return UNCHECKED;
	}

	/**
	 * Whether no test compiles or binds a block.
	 * @param block a block of the documentation
	 * @return whether {@link #unchecked()} names it
	 */
	public static boolean isUnchecked(Block block) {
		return UNCHECKED.containsKey(block.key());
	}

	/**
	 * Every tagged region of the Java sources the build compiles: {@code src/main/java}
	 * and {@code src/test/java} of each module the root {@code pom.xml} lists. Lines that
	 * tag other regions are left out of a region, so regions may nest.
	 * @param root the project's root directory
	 * @return the regions, by source file
	 */
	public static List<Region> regions(Path root) {
		List<Region> regions = new ArrayList<>();
		Matcher module = MODULE.matcher(read(root.resolve("pom.xml")));
		List<Path> sources = new ArrayList<>();
		while (module.find()) {
			for (String tree : List.of("src/main/java", "src/test/java")) {
				Path dir = root.resolve(module.group(1).strip()).resolve(tree);
				if (Files.isDirectory(dir)) {
					try (Stream<Path> files = Files.walk(dir)) {
						files.filter((path) -> path.toString().endsWith(".java")).forEach(sources::add);
					}
					catch (IOException ex) {
						throw new UncheckedIOException(ex);
					}
				}
			}
		}
		sources.sort(null);
		for (Path source : sources) {
			regions.addAll(regions(root, source));
		}
		return regions;
	}

	private static List<Region> regions(Path root, Path source) {
		List<String> lines = readLines(source);
		String file = root.relativize(source).toString().replace('\\', '/');
		List<Region> regions = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			Matcher tag = TAG.matcher(lines.get(i));
			if (!tag.matches() || !tag.group(1).equals("tag")) {
				continue;
			}
			String name = tag.group(2);
			StringBuilder text = new StringBuilder();
			int j = i + 1;
			for (; j < lines.size(); j++) {
				Matcher other = TAG.matcher(lines.get(j));
				if (other.matches() && other.group(1).equals("end") && other.group(2).equals(name)) {
					break;
				}
				if (!other.matches()) {
					text.append(lines.get(j)).append('\n');
				}
			}
			if (j == lines.size()) {
				throw new IllegalStateException(file + ":" + (i + 1) + " tags region '" + name
						+ "' but no line '// end::" + name + "[]' ends it");
			}
			regions.add(new Region(file, i + 1, name, text.toString()));
		}
		return regions;
	}

	/**
	 * Whether a documented block is the code of a source region: the same tokens in the
	 * same order once comments, blank space and {@code this.} (which the source's style
	 * adds) are left out, where each {@value #ELISION} of the block stands for any code
	 * of the region.
	 * @param documented the block's text
	 * @param code the region's text
	 * @return whether they are the same code
	 */
	public static boolean sameCode(String documented, String code) {
		String pattern = Arrays.stream(normalize(documented).split(ELISION, -1))
			.map(Pattern::quote)
			.collect(Collectors.joining(".*?"));
		return Pattern.compile(pattern, Pattern.DOTALL).matcher(normalize(code)).matches();
	}

	private static String read(Path file) {
		try {
			return Files.readString(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static List<String> readLines(Path file) {
		return read(file).lines().toList();
	}

	/** Code without comments, whitespace and {@code this.}. */
	static String normalize(String code) {
		String withoutComments = code.replaceAll("(?s)/\\*.*?\\*/", "").replaceAll("//[^\\n]*", "");
		return withoutComments.replace("this.", "").replaceAll("\\s+", "");
	}

	/**
	 * One code block.
	 *
	 * @param language the block's language ({@code java}, {@code yaml}, …)
	 * @param text its text
	 */
	public record Snippet(String language, String text) {

		@Override
		public String toString() {
			return this.language + ": " + this.text.strip().lines().findFirst().orElse("");
		}

	}

	/**
	 * One fenced code block of the documentation.
	 *
	 * @param document the page, relative to the project's root ({@code docs/effects.md})
	 * @param line the line of its opening fence, from 1
	 * @param language the block's language ({@code java}, {@code yaml}, …), empty when it
	 * names none
	 * @param text its text, without the indentation of its fence
	 */
	public record Block(String document, int line, String language, String text) {

		/**
		 * The block as a snippet.
		 * @return its language and text
		 */
		public Snippet snippet() {
			return new Snippet(this.language, this.text);
		}

		/**
		 * How {@link DocSnippets#unchecked()} names the block: its page and first line,
		 * which move less than its line number.
		 * @return {@code docs/effects.md: @Component}
		 */
		public String key() {
			return this.document + ": " + this.text.strip().lines().findFirst().orElse("");
		}

		/**
		 * Where it is, for messages.
		 * @return {@code docs/effects.md:9}
		 */
		public String location() {
			return this.document + ":" + this.line;
		}

		@Override
		public String toString() {
			return location() + " (" + this.language + ") " + this.text.strip().lines().findFirst().orElse("");
		}

	}

	/**
	 * A tagged region of a Java source.
	 *
	 * @param source the source file, relative to the project's root
	 * @param line the line of its {@code tag::} comment, from 1
	 * @param name its name
	 * @param text the code between its tag lines
	 */
	public record Region(String source, int line, String name, String text) {

		/**
		 * Where it is, for messages.
		 * @return the source file and line of its tag
		 */
		public String location() {
			return this.source + ":" + this.line;
		}

		@Override
		public String toString() {
			return this.name + " (" + location() + ")";
		}

	}

}
