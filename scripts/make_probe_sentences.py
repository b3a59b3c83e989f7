"""Rebuild encoders/probe_sentences.txt: the probe set of the encoder quality gate (deterministic).

python3 scripts/make_probe_sentences.py
"""

import random
from pathlib import Path

base = """5G cell towers spread the coronavirus.
Drinking hot water every fifteen minutes kills the virus in your throat.
The moon landing in 1969 was filmed in a studio in Nevada.
A photo shows a shark swimming on a flooded highway after Hurricane Harvey.
Bill Gates wants to implant microchips in people through vaccines.
The Eiffel Tower was sold twice by a con artist in the 1920s.
Eating carrots dramatically improves your night vision.
The Great Wall of China is visible from space with the naked eye.
Lightning never strikes the same place twice.
Goldfish have a memory span of only three seconds.
NASA confirmed that the Earth will go dark for six days in December.
A senator said unemployment fell to its lowest level in fifty years.
The governor signed a bill banning plastic bags statewide.
Tap water in the city contains fluoride to control the population.
A viral video shows a politician falling asleep during a debate.
Onions placed in socks absorb toxins while you sleep.
The new law lets police fine drivers for eating behind the wheel.
Scientists found that chocolate is as healthy as a daily workout.
The pope endorsed a presidential candidate in 2016.
A meteor will hit the Atlantic Ocean next Tuesday, experts warn.
How do I reset my router's admin password?
What is the best way to learn Python as a beginner?
Where can I find cheap flights from Doha to Cairo?
Is it safe to drink tap water in Qatar?
How long does it take to get a residence permit?
Which bank gives the best exchange rate for euros?
Can I bring my cat on a domestic flight?
Why does my laptop overheat when I watch videos?
What documents do I need to renew my driving licence?
How can I tell if an online shop is a scam?
Does anyone know a good dentist near the corniche?
Should I buy a used car or lease a new one?
What's the difference between a virus and a bacterium?
How do vaccines train the immune system?
Is it true that cracking your knuckles causes arthritis?
When is the best season to visit the desert?
How much should I tip a taxi driver here?
Why is the sky blue during the day and red at sunset?
How do I convert a PDF into an editable Word document?
Where do I report a lost passport?
You can renew it online through the ministry's portal in about ten minutes.
Try restarting the router while holding the reset button for thirty seconds.
The best deals are usually on Tuesdays, so book early in the week.
Yes, but you need a vaccination certificate and an approved carrier.
It depends on your budget; leasing is cheaper month to month.
Bacteria are living cells, while viruses need a host to reproduce.
No, studies have found no link between knuckle cracking and arthritis.
Call the embassy first; they will tell you which forms to fill in.
Clean the fan and use the laptop on a hard, flat surface.
Rayleigh scattering makes short blue wavelengths spread across the sky.
A man is playing a guitar on the street.
A woman is slicing an onion in the kitchen.
Two dogs are running through a snowy field.
A child is riding a red bicycle down the hill.
The stock market fell sharply after the announcement.
The company reported record profits for the third quarter.
A plane is taking off from the runway.
Three men are playing chess in the park.
The cat sat quietly on the windowsill.
Heavy rain caused flooding in several neighbourhoods.
The committee postponed the vote until next month.
Researchers published their findings in a peer-reviewed journal.
The train was delayed by forty-five minutes because of a signal failure.
She won the marathon in under two and a half hours.
The museum reopened after a two-year renovation.
Prices of fresh vegetables rose by 12% in October.
He apologised for the misleading statement on Twitter.
Hospitals are running short of oxygen supplies.
The central bank raised interest rates by a quarter point.
Firefighters contained the wildfire after three days.
ok
yes
no thanks
why?
help!!!
lol what
Hmm... not sure.
N/A
12345
#fakenews
@user please check this
https://example.org/fact-check/5g-covid
BREAKING: miracle cure found!!! share before they delete it
"Quoted claim," she said, "is false."
Wait -- is this (really) true?!
Prices: $4.99, €5.20, £4.10 & ¥700.
Temperature: -40 °C equals -40 °F.
C'est une fausse information qui circule depuis 2020.
La vacuna no contiene microchips, según la OMS.
Der Impfstoff verändert nicht die menschliche DNA.
Questa notizia è stata smentita dal ministero.
O presidente não assinou essa lei.
Это утверждение было опровергнуто экспертами.
هذا الادعاء غير صحيح وفقا لوزارة الصحة.
האם זה נכון שהמים מזוהמים?
यह दावा पूरी तरह से गलत है।
这个说法没有科学依据。
このニュースは誤りであることが確認されました。
이 주장은 사실이 아닙니다.
Η είδηση αυτή είναι ψευδής.
Ce qui est vrai, c'est que l'été fut très chaud.
Naïve café owners façade their résumés.
Emoji test 😀🔥👍 is this legit? 🤔
Zürich, Kraków, São Paulo and Reykjavík.
“Smart quotes” and ‘single ones’ — plus an em dash…
Tab\tseparated\tvalues in one line.
ALL CAPS SENTENCE ABOUT A VERY URGENT WARNING
mIxEd CaSe TeXt LoOkS lIkE tHiS
word word word word word word word word
The quick brown fox jumps over the lazy dog.
Colorless green ideas sleep furiously.
I can't believe it's not butter!
Don't drink and drive; call a cab instead.
He said: "I'll be back" -- and never returned.
The ratio 3:2 is common in photography.
Version 2.13.0 fixed the bug from 2.12.1.
Call +974 4444 5555 or email info@example.com.
Flight QR 1234 departs at 07:45 from gate C12.
The GDP grew 3.4% year-on-year in Q2 2024.
COVID-19, SARS-CoV-2 and MERS are coronaviruses.
The WHO declared the outbreak a pandemic on 11 March 2020.
Whales are mammals, not fish.
Honey never spoils if it is stored properly.
Bananas are berries, but strawberries are not.
Octopuses have three hearts and blue blood.
A day on Venus is longer than its year.
Humans share about 60% of their genes with bananas.
Mount Everest grows about four millimetres every year.
The human body contains enough iron to make a small nail.
Sharks existed before trees did.
There are more possible chess games than atoms in the universe.
Volunteers planted ten thousand trees along the river banks.
The city council approved a new bike lane network.
Parents protested against the school's new uniform policy.
The bridge will be closed for maintenance this weekend.
Local farmers say the drought has cut their harvest in half.
A rare white lion cub was born at the national zoo.
The festival attracted more than two hundred thousand visitors.
Police arrested two suspects in connection with the robbery.
The airline cancelled dozens of flights due to a strike.
A new study links poor sleep to higher blood pressure.
The minister denied reports that fuel prices would double.
Online rumours claimed the singer had died, but she is alive and well.
The image was digitally altered to add the crowd.
The quote is falsely attributed to Albert Einstein.
The video is from 2015 and was filmed in another country.
The chart omits data from the last three years.
The figure cited is accurate, but the context is misleading.
There is no evidence that the supplement prevents infection.
The claim mixes a true event with an invented detail.
Officials confirmed the water supply is safe to drink.
The satellite photo shows a wildfire, not a military explosion.""".splitlines()
random.seed(7)
assert len(base) == len(set(base))
out = list(base)
# questions and claims recombined into two-sentence texts
for _ in range(220):
    a, b = random.sample(base, 2)
    out.append(f"{a} {b}")
# long paragraphs (many beyond 256 word pieces, so truncation is exercised)
for n in (4, 6, 8, 10, 14, 18, 24, 30):
    for _ in range(8):
        out.append(" ".join(random.sample(base, n)))
# punctuation, spacing and case variants
for s in random.sample(base, 90):
    variant = random.choice(
        [s.upper(), s.lower(), "  " + s + "  ", s.replace(" ", "  "), s + "?!", "- " + s, s + " " + s]
    )
    out.append(variant)
seen: set[str] = set()
final = []
for s in out:
    if s not in seen:
        seen.add(s)
        final.append(s)
target = Path(__file__).resolve().parents[1] / "encoders" / "probe_sentences.txt"
target.write_text("\n".join(final) + "\n", encoding="utf-8")
print(f"{len(final)} probe sentences written to {target}")
