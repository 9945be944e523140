package io.ductor.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.domain.JavaTypeVariable;
import com.tngtech.archunit.core.domain.ThrowsDeclaration;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ductor's public API is exactly what the README's "Public API" section names: every
 * public top-level type of the library outside an {@code internal} package is listed
 * there, and every listed type exists. No signature of that API names an {@code internal}
 * type, and no package depends on another that depends back on it. The shop is a user
 * application, so it reaches nothing internal.
 */
class PublicApiTest {

	private static final Pattern API_LINE = Pattern.compile("^- `(io\\.ductor[a-z.]*)`: (.+)$");

	private static final Pattern NAME = Pattern.compile("`([A-Za-z0-9]+)`");

	private static JavaClasses library;

	private static JavaClasses shop;

	@BeforeAll
	static void importClasses() {
		JavaClasses all = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("io.ductor");
		library = all.that(DescribedPredicate.describe("the library",
				(JavaClass c) -> !inPackage(c, "io.ductor.sample") && !inPackage(c, "io.ductor.test")));
		shop = all.that(DescribedPredicate.describe("the shop", (JavaClass c) -> inPackage(c, "io.ductor.sample")));
	}

	/**
	 * Whether {@code type} is in package {@code name} or one of its sub-packages:
	 * {@code io.ductor.testing} (the library) is not in {@code io.ductor.test} (the
	 * build's test support).
	 */
	private static boolean inPackage(JavaClass type, String name) {
		return type.getPackageName().equals(name) || type.getPackageName().startsWith(name + ".");
	}

	@Test
	void everyPublicTypeOutsideInternalPackagesIsNamedInTheReadme() throws IOException {
		Set<String> documented = documentedTypes();
		Set<String> published = new TreeSet<>();
		for (JavaClass type : library) {
			if (type.isTopLevelClass() && type.getModifiers().contains(JavaModifier.PUBLIC)
					&& !type.getPackageName().contains(".internal")) {
				published.add(type.getName());
			}
		}
		assertThat(published).as("public types the README's Public API section does not name").isSubsetOf(documented);
		assertThat(documented).as("types the README's Public API section names that are not public library types")
			.isSubsetOf(published);
	}

	@Test
	void noPublicSignatureNamesAnInternalType() {
		List<String> leaks = new ArrayList<>();
		for (JavaClass type : library) {
			if (isApi(type)) {
				leaks.addAll(internalTypesIn(type));
			}
		}
		assertThat(leaks).as("public signatures outside internal packages that name an internal type").isEmpty();
	}

	@Test
	void noPackageDependsOnAPackageThatDependsBackOnIt() {
		assertThat(packageCycles(library)).as("cycles between the library's packages").isEmpty();
	}

	@Test
	void everyPackageOfTheLibraryAndTheShopIsNullMarked() {
		Set<String> unmarked = new TreeSet<>();
		for (JavaClasses classes : List.of(library, shop)) {
			for (JavaClass type : classes) {
				boolean marked = type.getPackage()
					.tryGetPackageInfo()
					.map((info) -> info.isAnnotatedWith(NullMarked.class))
					.orElse(false);
				if (!marked) {
					unmarked.add(type.getPackageName());
				}
			}
		}
		assertThat(unmarked).as("packages without @NullMarked in their package-info.java").isEmpty();
	}

	@Test
	void theShopUsesOnlyThePublicApi() {
		noClasses().should().dependOnClassesThat().resideInAPackage("io.ductor..internal..").check(shop);
	}

	/**
	 * Whether {@code type} is part of the API: public (or a public or protected member
	 * type of such a type) and outside {@code internal} packages.
	 */
	private static boolean isApi(JavaClass type) {
		if (isInternal(type) || !type.getModifiers().contains(JavaModifier.PUBLIC)
				&& !type.getModifiers().contains(JavaModifier.PROTECTED)) {
			return false;
		}
		return type.getEnclosingClass().map(PublicApiTest::isApi).orElse(type.isTopLevelClass());
	}

	private static boolean isInternal(JavaClass type) {
		return type.getPackageName().endsWith(".internal") || type.getPackageName().contains(".internal.");
	}

	private static boolean isVisible(JavaMember member) {
		return member.getModifiers().contains(JavaModifier.PUBLIC)
				|| member.getModifiers().contains(JavaModifier.PROTECTED)
						&& !member.getOwner().getModifiers().contains(JavaModifier.FINAL);
	}

	/**
	 * The internal types named by {@code type}'s supertypes and type parameters and by
	 * the signatures of its visible fields, constructors and methods (parameters,
	 * results, type arguments, bounds and thrown exceptions), one line each.
	 */
	static List<String> internalTypesIn(JavaClass type) {
		List<String> leaks = new ArrayList<>();
		type.getSuperclass().ifPresent((superclass) -> check(leaks, type.getName() + " extends", superclass));
		type.getInterfaces().forEach((supertype) -> check(leaks, type.getName() + " implements", supertype));
		for (JavaTypeVariable<?> variable : type.getTypeParameters()) {
			check(leaks, type.getName() + " type parameter " + variable.getName(), variable);
		}
		for (JavaField field : type.getFields()) {
			if (isVisible(field)) {
				check(leaks, field.getFullName(), field.getType());
			}
		}
		for (JavaCodeUnit unit : type.getCodeUnits()) {
			if (!isVisible(unit) || unit.getModifiers().contains(JavaModifier.SYNTHETIC)
					|| unit.getModifiers().contains(JavaModifier.BRIDGE)) {
				continue;
			}
			check(leaks, unit.getFullName() + " returns", unit.getReturnType());
			unit.getParameterTypes().forEach((parameter) -> check(leaks, unit.getFullName() + " takes", parameter));
			for (JavaTypeVariable<?> variable : unit.getTypeParameters()) {
				check(leaks, unit.getFullName() + " type parameter " + variable.getName(), variable);
			}
			for (ThrowsDeclaration<?> thrown : unit.getThrowsClause()) {
				check(leaks, unit.getFullName() + " throws", thrown.getRawType());
			}
		}
		return leaks;
	}

	private static void check(List<String> leaks, String where, JavaType type) {
		Set<JavaClass> involved = (type instanceof JavaTypeVariable<?> variable) ? variable.getUpperBounds()
			.stream()
			.flatMap((bound) -> bound.getAllInvolvedRawTypes().stream())
			.collect(java.util.stream.Collectors.toSet()) : type.getAllInvolvedRawTypes();
		for (JavaClass named : involved) {
			if (named.getPackageName().startsWith("io.ductor") && isInternal(named)) {
				leaks.add(where + " " + named.getName());
			}
		}
	}

	/**
	 * The cycles of the package graph of {@code classes} (package A depends on package B
	 * when a class of A names a class of B anywhere, its code included), each as its
	 * packages with the dependencies that join them.
	 */
	static List<String> packageCycles(JavaClasses classes) {
		Map<String, Map<String, String>> edges = new TreeMap<>();
		for (JavaClass type : classes) {
			type.getDirectDependenciesFromSelf().forEach((dependency) -> {
				String from = type.getPackageName();
				String to = dependency.getTargetClass().getPackageName();
				if (!from.equals(to) && classes.contain(dependency.getTargetClass().getName())) {
					edges.computeIfAbsent(from, (key) -> new TreeMap<>())
						.putIfAbsent(to, type.getName() + " -> " + dependency.getTargetClass().getName());
				}
			});
		}
		List<String> cycles = new ArrayList<>();
		for (Set<String> component : stronglyConnected(edges)) {
			StringBuilder cycle = new StringBuilder(component.toString());
			for (String from : component) {
				edges.getOrDefault(from, Map.of()).forEach((to, example) -> {
					if (component.contains(to)) {
						cycle.append("\n    ").append(example);
					}
				});
			}
			cycles.add(cycle.toString());
		}
		return cycles;
	}

	/** Tarjan's strongly connected components of more than one package. */
	private static List<Set<String>> stronglyConnected(Map<String, Map<String, String>> edges) {
		Map<String, Integer> index = new HashMap<>();
		Map<String, Integer> low = new HashMap<>();
		Deque<String> stack = new ArrayDeque<>();
		List<Set<String>> components = new ArrayList<>();
		for (String start : edges.keySet()) {
			if (!index.containsKey(start)) {
				connect(start, edges, index, low, stack, components);
			}
		}
		return components;
	}

	private static void connect(String node, Map<String, Map<String, String>> edges, Map<String, Integer> index,
			Map<String, Integer> low, Deque<String> stack, List<Set<String>> components) {
		index.put(node, index.size());
		low.put(node, index.get(node));
		stack.push(node);
		for (String next : edges.getOrDefault(node, Map.of()).keySet()) {
			if (!index.containsKey(next)) {
				connect(next, edges, index, low, stack, components);
				low.put(node, Math.min(low.get(node), low.get(next)));
			}
			else if (stack.contains(next)) {
				low.put(node, Math.min(low.get(node), index.get(next)));
			}
		}
		if (low.get(node).equals(index.get(node))) {
			Set<String> component = new TreeSet<>();
			String member;
			do {
				member = stack.pop();
				component.add(member);
			}
			while (!member.equals(node));
			if (component.size() > 1) {
				components.add(component);
			}
		}
	}

	static Set<String> documentedTypes() throws IOException {
		Map<String, String> sections = new TreeMap<>();
		Set<String> names = new TreeSet<>();
		boolean inSection = false;
		for (String line : Files.readAllLines(readme())) {
			if (line.startsWith("## ")) {
				inSection = line.equals("## Public API");
				continue;
			}
			Matcher api = API_LINE.matcher(line);
			if (inSection && api.matches()) {
				Matcher name = NAME.matcher(api.group(2));
				while (name.find()) {
					names.add(api.group(1) + "." + name.group(1));
				}
				sections.put(api.group(1), line);
			}
		}
		assertThat(sections).as("packages listed under '## Public API' in README.md").isNotEmpty();
		return names;
	}

	private static Path readme() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("sample-app"))) {
				return dir.resolve("README.md");
			}
		}
		throw new IllegalStateException("README.md not found above " + Path.of("").toAbsolutePath());
	}

}
