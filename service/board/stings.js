// The stings a bee carries (seed §2). The one place the board computes a rule: views carry bare
// bee numbers today; when they carry stings (issue 11), this helper is the only thing to drop.

export function stings(bee) {
  if (bee === 55) return 7;
  if (bee % 11 === 0 && bee <= 77) return 5; // 11, 22, 33, 44, 66, 77
  if (bee % 10 === 0) return 3;
  if (bee % 10 === 5) return 2;
  return 1;
}

export function pileStings(bees) {
  return bees.reduce((sum, bee) => sum + stings(bee), 0);
}

export function stingWord(n) {
  return n === 1 ? "1 sting" : `${n} stings`;
}
