"""A varied corpus for benchmarks: facts about a user's life over many topics and phrasings.

`bench.synthetic` fills 14 templates from short word lists, so its vectors crowd into 14 tight
clusters and near-duplicates, which no real store holds and which an HNSW graph navigates
badly (docs/benchmarks.md, "Recall and writes"). Here ≈ 110 templates over some twenty topics
take slots from larger word lists, and qualifying clauses vary them further, so 92 % of
100,000 texts are different and they spread over the embedding space as a product's memories
would. The questions are asked the way an assistant would ask them, about the same topics.
Reproducible by seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

WORDS: dict[str, list[str]] = {
    "name": ["Emma", "Liam", "Sofia", "Noah", "Aiko", "Mateo", "Amara", "Oskar", "Priya", "Jonas",
             "Chloe", "Tariq", "Ines", "Kenji", "Zara", "Felix", "Nadia", "Hugo", "Leila", "Ravi",
             "Maya", "Elias", "Grace", "Tomas", "Yara", "Dmitri", "Alice", "Kwame", "Lucia", "Ben"],
    "relative": ["sister", "brother", "mother", "father", "daughter", "son", "partner", "wife",
                 "husband", "grandmother", "grandfather", "uncle", "aunt", "cousin", "flatmate",
                 "best friend", "stepson", "niece", "nephew", "mother-in-law"],
    "city": ["Lisbon", "Berlin", "Oslo", "Madrid", "Toronto", "Nairobi", "Osaka", "Lima", "Austin",
             "Krakow", "Dublin", "Seoul", "Accra", "Porto", "Lyon", "Quito", "Perth", "Tallinn",
             "Montreal", "Glasgow", "Bologna", "Hanoi", "Cape Town", "Denver", "Utrecht", "Cork",
             "Valencia", "Gothenburg", "Melbourne", "Bogotá", "Istanbul", "Edinburgh", "Kyoto"],
    "country": ["Portugal", "Japan", "Kenya", "Canada", "Norway", "Peru", "Vietnam", "Iceland",
                "Morocco", "Chile", "Greece", "New Zealand", "Mexico", "Italy", "Scotland",
                "Ghana", "Thailand", "Argentina", "Croatia", "Georgia"],
    "job": ["nurse", "data engineer", "primary school teacher", "architect", "airline pilot",
            "accountant", "pastry chef", "product designer", "tax lawyer", "electrician",
            "marine biologist", "journalist", "dentist", "physiotherapist", "civil engineer",
            "social worker", "pharmacist", "UX researcher", "firefighter", "translator",
            "veterinarian", "carpenter", "radiologist", "sales manager", "barista"],
    "employer": ["a hospital in the city centre", "a small design studio", "a logistics startup",
                 "the regional council", "a bank", "a university lab", "a family bakery",
                 "a games company", "an NGO working on clean water", "a car manufacturer",
                 "a public library", "a law firm", "a renewable energy company"],
    "pet": ["a beagle called {name}", "two elderly cats", "a grey parrot", "a rescue greyhound",
            "a tortoise older than they are", "a tank of tropical fish", "a lop-eared rabbit",
            "a very anxious border collie", "three chickens", "a bearded dragon"],
    "food": ["sushi", "spicy Sichuan noodles", "fresh pasta", "fish tacos", "pork dumplings",
             "falafel wraps", "tonkotsu ramen", "seafood paella", "lamb tagine", "pho",
             "Ethiopian injera", "margherita pizza", "beef rendang", "mushroom risotto",
             "pierogi", "ceviche", "chana masala", "bibimbap", "moussaka", "jollof rice"],
    "drink": ["oat flat whites", "green tea", "sparkling water", "craft IPA", "natural wine",
              "decaf after noon", "kombucha", "single malt whisky", "hot chocolate", "yerba mate"],
    "diet": ["vegetarian", "vegan", "pescatarian", "keto", "gluten-free", "halal", "kosher",
             "low-sodium", "dairy-free", "intermittent fasting"],
    "allergy": ["peanuts", "shellfish", "gluten", "lactose", "penicillin", "birch pollen",
                "cat dander", "sesame", "latex", "bee stings", "tree nuts", "eggs"],
    "condition": ["asthma", "type 1 diabetes", "migraines", "a bad knee", "lower back pain",
                  "high blood pressure", "insomnia", "tinnitus", "hay fever", "a heart murmur"],
    "sport": ["bouldering", "trail running", "swimming", "tennis", "five-a-side football",
              "yoga", "rowing", "cycling", "Brazilian jiu-jitsu", "padel", "skiing", "surfing",
              "basketball", "badminton", "open-water swimming"],
    "hobby": ["chess", "pottery", "birdwatching", "salsa dancing", "woodworking", "sailing",
              "baking sourdough", "film photography", "knitting", "gardening", "astronomy",
              "calligraphy", "model railways", "stand-up comedy", "beekeeping", "crosswords"],
    "instrument": ["piano", "cello", "electric guitar", "drums", "violin", "saxophone", "ukulele",
                   "trumpet", "harp", "bass guitar"],
    "music": ["jazz", "Afrobeat", "classical", "heavy metal", "K-pop", "folk", "techno",
              "bossa nova", "hip hop", "opera", "country", "ambient"],
    "genre": ["crime novels", "science fiction", "history books", "poetry", "graphic novels",
              "biographies", "fantasy sagas", "books on economics", "travel writing",
              "Russian classics"],
    "show": ["nature documentaries", "Scandinavian crime dramas", "cooking competitions",
             "anime", "sitcoms from the nineties", "true-crime podcasts", "football highlights",
             "reality TV"],
    "language": ["Spanish", "Japanese", "German", "Portuguese", "Mandarin", "Arabic", "French",
                 "Swahili", "Korean", "Italian", "Polish", "Dutch"],
    "tool": ["Vim", "VS Code", "Excel", "Figma", "Notion", "Jira", "Linear", "Obsidian", "Emacs",
             "Google Docs", "Trello", "a paper notebook", "Apple Notes", "Slack"],
    "device": ["an old ThinkPad", "a MacBook Air", "an Android phone", "an iPhone", "a Kindle",
               "a Steam Deck", "a desktop PC they built", "an iPad with a pencil"],
    "vehicle": ["an electric hatchback", "a cargo bike", "a vintage Vespa", "a seven-seater van",
                "no car at all", "a hybrid estate", "a motorbike", "a folding bike"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "month": ["January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December"],
    "season": ["spring", "summer", "autumn", "winter"],
    "time": ["7 am", "8:30", "noon", "2 pm", "half past four", "6 pm", "9 pm", "late evening"],
    "colour": ["dark green", "navy", "mustard yellow", "black", "terracotta", "lilac", "grey"],
    "subject": ["maths", "chemistry", "art history", "computer science", "nursing", "law",
                "music theory", "economics", "philosophy", "mechanical engineering"],
    "goal": ["run a marathon", "save for a flat", "learn to code", "get promoted to team lead",
             "read fifty books this year", "cut down on sugar", "move abroad",
             "finish their thesis", "start a small business", "sleep eight hours a night"],
    "brand": ["IKEA", "Patagonia", "Lego", "Nintendo", "Uniqlo", "Muji", "Le Creuset", "Bose"],
    "team": ["Benfica", "the Toronto Raptors", "Arsenal", "the All Blacks", "Boca Juniors",
             "the Chicago Cubs", "Borussia Dortmund", "the Seattle Storm"],
    "project": ["a kitchen renovation", "a mobile app for their running club", "a wedding",
                "a garden shed", "a family history book", "a podcast about local history",
                "a community fridge", "a bathroom remodel", "a board game prototype"],
    "size": ["small", "medium", "large", "EU 42", "UK 8", "US 10", "extra large"],
    "seat": ["aisle seats", "window seats", "seats near the front", "exit rows"],
    "channel": ["email", "text message", "a phone call", "WhatsApp", "a voice note"],
    "money": ["200", "500", "1,500", "3,000", "50", "120", "10,000"],
}

TEMPLATES: list[str] = [
    # home and family
    "Lives in {city} with their {relative} and has been there for {n} years.",
    "Moved from {city} to {city} last {season} for their {relative}'s job.",
    "Their {relative} {name} lives in {city}; they visit every {n} months.",
    "Has a {n}-year-old {relative} named {name} who has just started school.",
    "Is expecting a baby in {month} and is still choosing between the names {name} and {name}.",
    "Shares the flat with {name}, who works nights, so mornings must be quiet.",
    "Their {relative}'s birthday is in {month}; they always forget to buy a present in time.",
    "Looks after their {relative} every {weekday} afternoon.",
    "Grew up in {country} and still speaks {language} with their {relative}.",
    "Is renting a two-bedroom flat in {city} and hopes to buy within {n} years.",
    "Their {relative} {name} is recovering from surgery and needs lifts to appointments.",
    # pets
    "Has {pet} that needs walking twice a day.",
    "Is thinking about adopting {pet} but their landlord has not agreed yet.",
    "Their vet appointment for {pet} is on the first {weekday} of {month}.",
    # work
    "Works as a {job} at {employer}.",
    "Has been a {job} for {n} years and is considering a move into management.",
    "Was promoted to senior {job} in {month} and now leads a team of {n}.",
    "Starts work at {time} and finishes early on {weekday}s.",
    "Has a standing call every {weekday} at {time} with the {city} office.",
    "Is interviewing for a {job} role at {employer} next {weekday}.",
    "Left their job at {employer} in {month} and is freelancing for now.",
    "Works from home on {weekday}s and {weekday}s and commutes by {vehicle} otherwise.",
    "Manager is called {name} and prefers updates by {channel}.",
    "Is on call one week in {n} and cannot travel during those weeks.",
    "Needs every report in {tool}; their team rejects anything else.",
    "Is working on {project} with a deadline at the end of {month}.",
    # education and languages
    "Studied {subject} at university in {city}.",
    "Is taking an evening course in {subject} twice a week.",
    "Is learning {language} and practises for {n} minutes every day.",
    "Speaks {language} fluently and is rusty in {language}.",
    "Wants to sit a {language} exam in {month} to qualify for a job abroad.",
    "Their {relative} is studying {subject} and asks them for help with assignments.",
    # food and drink
    "Favourite food is {food}, especially on {weekday} evenings.",
    "Is {diet} and has been for {n} years.",
    "Is allergic to {allergy}; keep it out of any meal suggestions.",
    "Carries an adrenaline pen because of a severe {allergy} allergy.",
    "Cannot stand {food} since a bad experience in {city}.",
    "Drinks {drink} and avoids caffeine after {time}.",
    "Is learning to cook {food} for a dinner party in {month}.",
    "Their {relative} is {diet}, so shared meals have to be {diet} too.",
    "Orders {food} from the same place in {city} almost every {weekday}.",
    "Has given up alcohol for {month} and prefers {drink} instead.",
    # health
    "Has {condition} and takes medication every morning.",
    "Sees a physiotherapist every {weekday} for {condition}.",
    "Was diagnosed with {condition} in {month}; still adjusting to it.",
    "Avoids long runs because of {condition}.",
    "Sleeps badly and wants reminders to stop screens after {time}.",
    "Has a dentist appointment on {weekday} at {time}.",
    "Is {n} weeks into physical therapy after a {sport} injury.",
    # sport and hobbies
    "Spends weekends {hobby}; started about {n} years ago.",
    "Goes {sport} every {weekday} before work.",
    "Is training for a half marathon in {city} in {month}.",
    "Plays {instrument} in an amateur orchestra that rehearses on {weekday}s.",
    "Has been learning {instrument} for {n} months and practises at night with headphones.",
    "Is a lifelong fan of {team} and never misses a match.",
    "Joined a {hobby} club in {city} and meets them every other {weekday}.",
    "Wants to try {sport} this {season} but is nervous about it.",
    "Gave up {sport} after a shoulder injury and switched to {hobby}.",
    "Listens to {music} while working and {music} when running.",
    "Reads mostly {genre} and is in a book club that meets monthly.",
    "Watches {show} to unwind and dislikes anything with subtitles.",
    "Is collecting vintage {brand} sets and has about {n} of them.",
    "Goal for this year: {goal}.",
    "Their main goal right now is to {goal} before {month}.",
    # travel
    "Is planning a trip to {country} in {month} for {n} days.",
    "Will travel to {city} in {n} weeks for a conference.",
    "Prefers {seat} on flights and always travels with hand luggage only.",
    "Is afraid of flying and takes the train whenever possible.",
    "Has been to {country} {n} times and wants to go back in {season}.",
    "Needs a visa for {country} and the application is due by {month}.",
    "Honeymoon in {country} is booked for {month}.",
    "Is looking for a hotel in {city} under {money} euros a night.",
    "Gets carsick, so road trips longer than {n} hours are out.",
    # money and shopping
    "Is saving {money} euros a month towards a deposit.",
    "Has a monthly budget of {money} euros for eating out.",
    "Wears size {size} in shirts and prefers {colour} or {colour}.",
    "Wants gift ideas under {money} euros for their {relative}.",
    "Is paying off a car loan for {vehicle} until {month}.",
    "Only buys clothes from {brand} because they last.",
    "Splits bills with {name} and tracks them in {tool}.",
    # tools, tech and communication
    "Prefers to write everything in {tool} and dislikes switching tools.",
    "Uses {device} for work and {device} at home.",
    "Prefers {channel} to phone calls and rarely answers unknown numbers.",
    "Wants replies to be short and to the point, no more than {n} sentences.",
    "Likes detailed explanations with examples rather than summaries.",
    "Wants to be addressed as {name}, not by their full name.",
    "Reads messages in {language} more easily than in English.",
    "Is colour-blind, so charts should not rely on red and green.",
    "Uses a screen reader and needs images described.",
    "Drives {vehicle} and parks at the station on weekdays.",
    # schedule and availability
    "Cannot take calls before {time} because of the school run.",
    "Is on holiday from the {n}th of {month} and will not check email.",
    "Has therapy every {weekday} at {time} and keeps that hour free.",
    "Prefers meetings in the morning and blocks {weekday} afternoons for focus.",
    "Is in a time zone {n} hours ahead of the team.",
    "Is fasting during daylight this month and prefers no lunch meetings.",
    # home and projects
    "Is renovating {project} and keeps a budget of {money} euros for it.",
    "Grows tomatoes and herbs on a balcony facing {season} sun.",
    "Painted the living room {colour} last {season} and regrets it.",
    "Has a leaking roof that the landlord promised to fix by {month}.",
    "Is building {project} in the evenings.",
    # values and dislikes
    "Volunteers at a food bank every {weekday} evening.",
    "Does not want reminders about {goal} any more.",
    "Gets anxious about deadlines; gentle nudges work better than warnings.",
    "Strongly dislikes small talk at the start of meetings.",
    "Votes in every local election and follows {city} council news closely.",
    "Is religious and does not work on {weekday}s.",
    "Avoids fast fashion and buys second-hand when possible.",
    "Would rather not discuss their {relative}; the topic is painful.",
]

QUALIFIERS: list[str] = [
    "as of {month}", "according to their {relative}", "though this may change after {month}",
    "mentioned on a call last {weekday}", "since moving to {city}", "for the past {n} years",
    "at least until {season}", "as {name} confirmed in {month}", "except during {month}",
    "unless {name} is visiting", "which matters for the trip to {country}",
    "said over {channel} in {month}", "like their {relative} {name}",
    "ever since a stay in {country}", "at least on {weekday}s", "until the move to {city}",
]

QUESTIONS: list[str] = [
    "where does this person live?", "who do they live with?", "do they have children?",
    "what is their {relative}'s name?", "when should I call their family?",
    "do they have any pets?", "who looks after the dog?",
    "what do they do for a living?", "who is their employer?", "are they looking for a new job?",
    "how big is their team?", "when do they start work?", "what is their manager like?",
    "which tool does their team use for reports?", "what deadlines do they have this month?",
    "what did they study?", "which languages do they speak?", "are they taking any classes?",
    "what should I avoid cooking for them?", "do they eat meat?", "what do they like to eat?",
    "any food allergies I should know about?", "what do they drink in the afternoon?",
    "do they have health problems?", "are they taking any medication?",
    "when is their next medical appointment?", "are they injured?",
    "what do they do at the weekend?", "what sports do they play?",
    "do they play an instrument?", "what kind of music do they like?", "what do they read?",
    "what do they watch in the evening?", "which team do they support?",
    "what are they trying to achieve this year?", "are they training for a race?",
    "are they travelling soon?", "which seat should I book on the plane?",
    "do they like flying?", "do they need a visa for the trip?",
    "where are they going on holiday?", "how much can they spend on a hotel?",
    "what is their budget?", "what size clothes do they wear?",
    "what gift could I buy for their {relative}?", "are they saving for something?",
    "which laptop do they use?", "how do they prefer to be contacted?",
    "how long should my answers be?", "how should I address them?",
    "do they need accessible formats?", "how do they get to work?",
    "when are they free to talk?", "are they on holiday?", "which afternoons are blocked?",
    "what time zone are they in?", "what are they building at home?",
    "is anything broken in their flat?", "what topics should I avoid with them?",
    "how should I remind them about deadlines?", "what do they do to help their community?",
    "is {name} a friend or family member?", "what happened in {city}?",
    "do they know anyone in {country}?", "what do they think of {food}?",
]

_SLOT = re.compile(r"\{(\w+)\}")


def _fill(template: str, rng: random.Random) -> str:
    def slot(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "n":
            return str(rng.randint(2, 12))
        value = rng.choice(WORDS[name])
        return _SLOT.sub(slot, value)  # a value may hold a slot of its own ("called {name}")

    return _SLOT.sub(slot, template)


def memory_texts(count: int, *, seed: int = 7) -> Iterator[str]:
    """One fact a text. A third carry a qualifying clause, and every fact with fewer than
    three slots one or two, so that few texts repeat (8 % of 100,000)."""
    rng = random.Random(seed)
    for _ in range(count):
        template = rng.choice(TEMPLATES)
        slots = len(_SLOT.findall(template))
        clauses = 2 if slots == 0 else 1 if slots < 3 or rng.random() < 1 / 3 else 0
        text = template
        for _ in range(clauses):
            text = f"{text[:-1]}, {rng.choice(QUALIFIERS)}."
        yield _fill(text, rng)


def questions(count: int, *, seed: int = 5) -> list[str]:
    """``count`` different questions an assistant would ask about a user."""
    rng, asked = random.Random(seed), dict[str, None]()
    while len(asked) < count:
        asked.setdefault(_fill(rng.choice(QUESTIONS), rng))
    return list(asked)
